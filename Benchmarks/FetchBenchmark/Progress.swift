import MarqueePipeline
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts finished jobs; the Nth resumes the waiter. Records when (and at what CPU time) the first job started and
/// the Nth succeeded.
final class Progress: Sendable {
    struct Result {
        var elapsed: Duration
        /// User + system CPU time of the whole process over ``elapsed``.
        var cpu: Duration
        var failed: Int
        /// Mean time in the handler (fetch and parse), and from the handler's start to the job's durable outcome.
        var handlerMilliseconds: Double
        var jobMilliseconds: Double
        /// Mean outputs (records, image jobs, follow-up fetch jobs) a job produced.
        var outputsPerJob: Double
    }

    private struct State {
        var succeeded = 0
        var failed = 0
        var handlerTime = Duration.zero
        var handled = 0
        var outputs = 0
        var jobTime = Duration.zero
        var started: (wall: ContinuousClock.Instant, cpu: Duration)?
        var ended: (wall: ContinuousClock.Instant, cpu: Duration)?
        var finishWaiter: CheckedContinuation<Void, Never>?
        var startWaiters: [CheckedContinuation<ContinuousClock.Instant, Never>] = []
    }

    private let target: Int
    private let state = Mutex(State())

    init(target: Int) { self.target = target }

    /// A job started (the first call starts the clock).
    func started() {
        let waiters: [CheckedContinuation<ContinuousClock.Instant, Never>] = self.state.withLock { state in
            guard state.started == nil else { return [] }
            let now = ContinuousClock.now
            state.started = (now, Self.cpuTime())
            defer { state.startWaiters = [] }
            return state.startWaiters
        }
        guard !waiters.isEmpty, let start = self.state.withLock({ $0.started?.wall }) else { return }
        for waiter in waiters { waiter.resume(returning: start) }
    }

    /// A job reached its durable outcome. Only successes count towards the target (a retried job runs again).
    func finished(_ outcome: StageOutcome, duration: Duration = .zero) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            guard case .succeeded(let outputs) = outcome else {
                state.failed += 1
                return nil
            }
            state.outputs += outputs
            state.succeeded += 1
            state.jobTime += duration
            guard state.succeeded == self.target else { return nil }
            state.ended = (.now, Self.cpuTime())
            defer { state.finishWaiter = nil }
            return state.finishWaiter
        }
        waiter?.resume()
    }

    /// A handler returned after `duration`.
    func handled(_ duration: Duration) {
        self.state.withLock { state in
            state.handled += 1
            state.handlerTime += duration
        }
    }

    var finishedCount: Int { self.state.withLock { $0.succeeded } }
    var failedCount: Int { self.state.withLock { $0.failed } }

    /// Waits until the target number of jobs succeeded.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = self.state.withLock { state in
                if state.ended != nil { return true }
                state.finishWaiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Waits until the first job started; returns when it did.
    func firstStart() async -> ContinuousClock.Instant {
        await withCheckedContinuation { (continuation: CheckedContinuation<ContinuousClock.Instant, Never>) in
            let start: ContinuousClock.Instant? = self.state.withLock { state in
                if let started = state.started { return started.wall }
                state.startWaiters.append(continuation)
                return nil
            }
            if let start { continuation.resume(returning: start) }
        }
    }

    func result() -> Result? {
        self.state.withLock { state in
            guard let started = state.started, let ended = state.ended else { return nil }
            return Result(
                elapsed: ended.wall - started.wall,
                cpu: ended.cpu - started.cpu,
                failed: state.failed,
                handlerMilliseconds: state.handlerTime.seconds * 1000 / Double(max(state.handled, 1)),
                jobMilliseconds: state.jobTime.seconds * 1000 / Double(max(state.succeeded, 1)),
                outputsPerJob: Double(state.outputs) / Double(max(state.succeeded, 1))
            )
        }
    }

    /// User + system CPU time of this process so far (every thread: tasks, the curl loop, librdkafka's threads).
    static func cpuTime() -> Duration {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }
}
