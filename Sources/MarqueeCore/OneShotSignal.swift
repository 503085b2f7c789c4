import Synchronization

/// A one-shot event that any number of tasks can await: a thread or callback fires it once, and every waiter,
/// earlier or later, resumes.
public final class OneShotSignal: Sendable {
    private struct Waiters {
        var next = 0
        var continuations: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters cancelled before their continuation was registered.
        var cancelled: Set<Int> = []
    }

    private enum State {
        case pending(Waiters)
        case fired
    }

    private let state = Mutex(State.pending(Waiters()))

    public init() {}

    /// Whether the signal has fired.
    public var isFired: Bool {
        self.state.withLock { if case .fired = $0 { true } else { false } }
    }

    /// Fires the signal, resuming every waiter; later calls do nothing.
    public func fire() {
        let waiters: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
            guard case .pending(let waiters) = state else { return [] }
            state = .fired
            return Array(waiters.continuations.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal has fired.
    public func wait() async {
        guard let id = self.register() else { return }
        await self.suspend(id)
    }

    /// Returns once the signal has fired or the calling task is cancelled, whichever comes first.
    public func waitUnlessCancelled() async {
        guard let id = self.register() else { return }
        await withTaskCancellationHandler {
            await self.suspend(id)
        } onCancel: {
            let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
                guard case .pending(var waiters) = state else { return nil }
                if let waiter = waiters.continuations.removeValue(forKey: id) {
                    state = .pending(waiters)
                    return waiter
                }
                waiters.cancelled.insert(id)
                state = .pending(waiters)
                return nil
            }
            waiter?.resume()
        }
    }

    /// A waiter's id, or `nil` when the signal has fired already.
    private func register() -> Int? {
        self.state.withLock { state in
            guard case .pending(var waiters) = state else { return nil }
            defer { state = .pending(waiters) }
            waiters.next += 1
            return waiters.next
        }
    }

    private func suspend(_ id: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = self.state.withLock { state in
                guard case .pending(var waiters) = state else { return true }
                if waiters.cancelled.remove(id) != nil {
                    state = .pending(waiters)
                    return true
                }
                waiters.continuations[id] = continuation
                state = .pending(waiters)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
