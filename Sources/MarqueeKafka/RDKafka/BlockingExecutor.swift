import MarqueeCore
import NIOPosix
import Synchronization

import class Foundation.Thread

/// The one place MarqueeKafka's blocking librdkafka calls run: a fixed pool of threads (swift-nio's
/// `NIOThreadPool`) shared by every producer, consumer, reader and admin client of the process, so that no
/// blocking call occupies the cooperative pool (two threads on these machines) and none starts a thread of its
/// own while the pool has one free.
///
/// What runs here: a consumer's start-up broker check, synchronous commits and close sequence, a producer's
/// delivery-report passes and close sequence, ``KafkaReader`` reads and ``KafkaAdmin`` requests. None of them
/// waits for another job, so the pool cannot deadlock. Some can block long: leaving a group waits for its
/// rebalance, however long `close(within:)` waits for it, and a flush waits up to its timeout. So a job never
/// queues behind them: when every pool thread is taken, a job runs on a thread of its own instead (the overflow,
/// as rare as that many long calls at once), and a delivery-report pass or a commit is never held up by another
/// client's close (docs/concurrency.md, "Kafka clients").
///
/// Jobs always run once submitted: a cancelled caller still waits for its call to finish (cancelling does not
/// undo a commit or a close that librdkafka already started).
enum BlockingExecutor {
    /// Eight threads: a worker process needs at most four at once (its consumer's close or commit, its producer's
    /// report pass, a probe, an admin request); the rest is headroom for processes running many clients.
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

    /// Pool jobs submitted and not finished; never more than ``threadCount``, so none waits in the pool's queue.
    private static let poolJobs = Atomic<Int>(0)

    private static func submit(_ body: @escaping @Sendable () -> Void) {
        guard self.poolJobs.add(1, ordering: .relaxed).newValue <= self.threadCount else {
            // Every pool thread is blocked in a call: do not wait behind them.
            self.poolJobs.subtract(1, ordering: .relaxed)
            Thread.detachNewThread(body)
            return
        }
        // `.cancelled` only comes from a pool that is shutting down, and this one never is.
        self.pool.submit { state in
            precondition(state == .active, "the Kafka blocking pool was shut down")
            body()
            self.poolJobs.subtract(1, ordering: .relaxed)
        }
    }
}
