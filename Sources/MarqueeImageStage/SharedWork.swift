import Synchronization

/// Work keyed by a value that concurrent callers share: the first caller for a key runs it in its own task, the
/// others wait for its result (for example, one download per URL however many jobs name it at once).
///
/// The work belongs to the caller that runs it: cancelling that caller (its partition was revoked) cancels the
/// work, and the next waiter runs it instead. Nothing is cached: once the work finished, the next caller for the
/// key runs it again.
final class SharedWork<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private enum Turn {
        /// Nobody runs the work: this caller does.
        case lead
        /// The leader finished with this result.
        case done(Result<Value, any Error>)
        /// The leader was cancelled: try again (run the work or wait for a new leader).
        case again
        /// This caller was cancelled while it waited.
        case cancelled
    }

    private struct Entry {
        var waiters: [UInt64: CheckedContinuation<Turn, Never>] = [:]
    }

    private struct State {
        var running: [Key: Entry] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// The callers waiting for `key`'s run.
    func waiting(_ key: Key) -> Int { self.state.withLock { $0.running[key]?.waiters.count ?? 0 } }

    /// Runs `work` for `key`, or waits for the run already under way.
    func run(key: Key, _ work: @Sendable () async throws -> Value) async throws -> Value {
        while true {
            let id = self.state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
            let turn = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
                    self.state.withLock { state in
                        if state.running[key] == nil {
                            state.running[key] = Entry()
                            continuation.resume(returning: .lead)
                        } else if Task.isCancelled {
                            continuation.resume(returning: .cancelled)
                        } else {
                            state.running[key]?.waiters[id] = continuation
                        }
                    }
                }
            } onCancel: {
                let waiter = self.state.withLock { $0.running[key]?.waiters.removeValue(forKey: id) }
                waiter?.resume(returning: .cancelled)
            }
            switch turn {
            case .lead:
                let result: Result<Value, any Error>
                do {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                // A leader cancelled mid-way hands the work on rather than its cancellation.
                let handed: Turn = Task.isCancelled ? .again : .done(result)
                let waiters = self.state.withLock {
                    $0.running.removeValue(forKey: key).map { Array($0.waiters.values) } ?? []
                }
                for waiter in waiters { waiter.resume(returning: handed) }
                return try result.get()
            case .done(let result):
                return try result.get()
            case .again:
                continue
            case .cancelled:
                throw CancellationError()
            }
        }
    }
}
