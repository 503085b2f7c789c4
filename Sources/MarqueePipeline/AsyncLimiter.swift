import Synchronization

/// Admits at most `limit` holders at once; the others wait in order (the stage's bounded concurrency).
public final class AsyncLimiter: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Bool, Never>] = []
        var isClosed = false
        var inUse = 0
    }

    private let state: Mutex<State>

    public init(limit: Int) {
        self.state = Mutex(State(available: max(limit, 1)))
    }

    /// Waits for a free place and takes it.
    ///
    /// - Returns: `false` when the limiter was closed instead (no place taken).
    @discardableResult
    public func acquire() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let admitted: Bool? = self.state.withLock { state in
                if state.isClosed { return false }
                guard state.available > 0 else {
                    state.waiters.append(continuation)
                    return nil
                }
                state.available -= 1
                state.inUse += 1
                return true
            }
            if let admitted { continuation.resume(returning: admitted) }
        }
    }

    /// Stops admitting: waiting and later `acquire` calls return `false`. Holders keep their places.
    public func close() {
        let waiters = self.state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// Gives a place back.
    public func release() {
        let next: CheckedContinuation<Bool, Never>? = self.state.withLock { state in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.available += 1
            state.inUse -= 1
            return nil
        }
        next?.resume(returning: true)
    }

    /// How many holders there are now.
    public var inUse: Int { self.state.withLock { $0.inUse } }
}
