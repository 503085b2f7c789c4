import Synchronization

/// A one-shot event that any number of tasks can await: a thread or callback fires it once, and every waiter,
/// earlier or later, resumes.
public final class OneShotSignal: Sendable {
    private enum State {
        case pending([CheckedContinuation<Void, Never>])
        case fired
    }

    private let state = Mutex(State.pending([]))

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
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal has fired.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = self.state.withLock { state in
                switch state {
                case .fired: return true
                case .pending(var waiters):
                    waiters.append(continuation)
                    state = .pending(waiters)
                    return false
                }
            }
            if resumeNow { continuation.resume() }
        }
    }
}
