import Synchronization
import Testing

/// A value that background work updates and a test waits on: `wait` returns as soon as a condition holds, or
/// fails the test after a deadline showing the value (no sleeping as synchronisation).
final class Observed<Snapshot: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Snapshot) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private let state: Mutex<(snapshot: Snapshot, waiters: [Waiter])>

    init(_ initial: Snapshot) {
        self.state = Mutex((initial, []))
    }

    var snapshot: Snapshot { self.state.withLock { $0.snapshot } }

    /// Changes the value and wakes the waiters whose condition now holds.
    func update(_ change: (inout Snapshot) -> Void) {
        let ready: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
            change(&state.snapshot)
            let snapshot = state.snapshot
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(snapshot) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `condition` holds; after `timeout` records an issue naming `what` and the value, and throws.
    func wait(
        _ what: String,
        timeout: Duration = .seconds(60),
        until condition: @escaping @Sendable (Snapshot) -> Bool
    ) async throws {
        let met = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now: Bool = self.state.withLock { state in
                        if condition(state.snapshot) { return true }
                        state.waiters.append(Waiter(condition: condition, continuation: continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // a deadline, not synchronisation
                return false
            }
            let met = await group.next() ?? false
            if !met {
                // Release the waiter so the group can finish.
                let waiters = self.state.withLock { state in
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.continuation.resume() }
            }
            group.cancelAll()
            return met
        }
        if !met {
            Issue.record("timed out after \(timeout) waiting until \(what): \(self.snapshot)")
            throw CancellationError()
        }
    }
}
