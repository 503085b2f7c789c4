import MarqueeCore
import NIOPosix

/// The one place MarqueeKafka's blocking librdkafka calls run: a fixed pool of threads (swift-nio's
/// `NIOThreadPool`) shared by every producer, consumer, reader and admin client of the process, so that no
/// blocking call occupies the cooperative pool (two threads on these machines) and none starts a thread of its
/// own.
///
/// What runs here: a consumer's start-up broker check, synchronous commits and close sequence, a producer's
/// delivery-report passes and close sequence, ``KafkaReader`` reads and ``KafkaAdmin`` requests. Each of these
/// is bounded by a librdkafka timeout, and none waits for another job of this pool, so the pool cannot
/// deadlock; with more long calls at once than it has threads, the later ones wait in its queue (docs/concurrency.md,
/// "Kafka clients").
///
/// Jobs always run once submitted: a cancelled caller still waits for its call to finish (cancelling does not
/// undo a commit or a close that librdkafka already started).
enum BlockingExecutor {
    /// Eight threads: a worker process needs at most four at once (its consumer's close or commit, its producer's
    /// report pass, a probe, an admin request); the rest is headroom for test processes running many clients.
    static let threadCount = 8

    /// Started on first use and never shut down (the threads wait on a condition while idle).
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    /// Runs blocking `work` on the pool and awaits its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            self.submit { continuation.resume(returning: work()) }
        }
    }

    /// Runs blocking, failing `work` on the pool and awaits its outcome.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(KafkaError) -> T) async throws(KafkaError) -> T {
        let result: Result<T, KafkaError> = await self.run { Result { () throws(KafkaError) in try work() } }
        return try result.get()
    }

    /// Starts `body` on the pool without waiting for it; the returned ``OneShotSignal`` fires when it returned.
    @discardableResult
    static func start(_ body: @escaping @Sendable () -> Void) -> OneShotSignal {
        let completion = OneShotSignal()
        self.submit {
            body()
            completion.fire()
        }
        return completion
    }

    private static func submit(_ body: @escaping @Sendable () -> Void) {
        // `.cancelled` only comes from a pool that is shutting down, and this one never is.
        self.pool.submit { state in
            precondition(state == .active, "the Kafka blocking pool was shut down")
            body()
        }
    }
}
