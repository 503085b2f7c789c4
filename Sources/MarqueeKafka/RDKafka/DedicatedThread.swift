import MarqueeCore
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

    /// Starts `body` on a new named thread; the returned ``OneShotSignal`` fires when `body` returned.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> OneShotSignal {
        let completion = OneShotSignal()
        let thread = Thread {
            body()
            completion.fire()
        }
        thread.name = name
        thread.start()
        return completion
    }
}
