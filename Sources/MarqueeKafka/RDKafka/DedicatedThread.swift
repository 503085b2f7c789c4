import Synchronization

import class Foundation.Thread

/// Dedicated OS threads for librdkafka's blocking calls (polls, flush, close, synchronous commits and admin
/// requests), so they never occupy the cooperative pool (2 threads on these machines).
enum DedicatedThread {
    /// Runs blocking `work` on a new thread and awaits its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    /// Runs blocking, failing `work` on a new thread and awaits its outcome.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(KafkaError) -> T) async -> Result<T, KafkaError> {
        await self.run { Result { () throws(KafkaError) in try work() } }
    }

    /// Starts `body` on a new named thread; the returned ``Completion`` fires when `body` returned.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Completion {
        let completion = Completion()
        let thread = Thread {
            body()
            completion.fire()
        }
        thread.name = name
        thread.start()
        return completion
    }
}

/// A one-shot event that any number of tasks can await.
final class Completion: Sendable {
    private enum State {
        case pending([CheckedContinuation<Void, Never>])
        case fired
    }

    private let state = Mutex(State.pending([]))

    var isFired: Bool {
        self.state.withLock { if case .fired = $0 { true } else { false } }
    }

    func fire() {
        let waiters: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
            guard case .pending(let waiters) = state else { return [] }
            state = .fired
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
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
