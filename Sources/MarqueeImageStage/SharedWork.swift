import Synchronization

/// Work keyed by a value that concurrent callers share: the first caller for a key runs it, the others wait
/// for its result (for example, one download per URL however many jobs name it at once).
///
/// Nothing is cached: once the work finished, the next caller for the key runs it again.
final class SharedWork<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let running = Mutex<[Key: Task<Value, any Error>]>([:])

    init() {}

    /// Runs `work` for `key`, or waits for the run already under way.
    func run(key: Key, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task: Task<Value, any Error> = self.running.withLock { running in
            if let task = running[key] { return task }
            let task = Task { try await work() }
            running[key] = task
            return task
        }
        defer {
            self.running.withLock { running in
                if running[key] == task { running[key] = nil }
            }
        }
        return try await task.value
    }
}
