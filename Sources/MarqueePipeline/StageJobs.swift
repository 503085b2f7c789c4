import MarqueeCore
import MarqueeKafka
import Synchronization

/// What one running job is doing now (``StageJob/enter(_:)``), and what it leaves for after its delivery: made
/// once per job, shared by the stage and the handler.
final class JobContext: Sendable {
    private struct Phase {
        var name: StaticString
        var since: ContinuousClock.Instant
    }

    let jobID: JobID?
    let kind: String
    /// The job's `traceparent`, read for its trace id only when a line about the job is logged.
    let traceparent: String?
    let started: ContinuousClock.Instant
    private let phase: Mutex<Phase>
    let afterDelivery = Mutex<[@Sendable () async -> Void]>([])

    init(jobID: JobID?, kind: String, traceparent: String? = nil, phase: StaticString) {
        let now = ContinuousClock.now
        self.jobID = jobID
        self.kind = kind
        self.traceparent = traceparent
        self.started = now
        self.phase = Mutex(Phase(name: phase, since: now))
    }

    func enter(_ phase: StaticString) {
        let now = ContinuousClock.now
        self.phase.withLock { $0 = Phase(name: phase, since: now) }
    }

    /// The phase's name and how long the job has been in it.
    func currentPhase(at now: ContinuousClock.Instant) -> (name: String, duration: Duration) {
        let phase = self.phase.withLock { $0 }
        return ("\(phase.name)", now - phase.since)
    }

    /// Runs the actions ``StageJob/whenDelivered(_:)`` left, in order.
    func runAfterDelivery() async {
        for action in self.afterDelivery.withLock({ $0 }) { await action() }
    }
}

/// The jobs a stage runs, each in a task of its own, so that shutdown is bounded whatever a job waits for.
///
/// A job that does not end when cancelled (it waits on something that does not answer cancellation) is left
/// behind after ``StageConfiguration/cancellationGrace``: its offset stays uncommitted, so it runs again on
/// whichever member reads its partition next, and the stage closes without it.
final class StageJobs: Sendable {
    private struct Running {
        let context: JobContext
        /// Whether this member still owns the job's message (its partition was not revoked since).
        let isOwned: @Sendable () -> Bool
        var task: Task<Void, Never>?
    }

    private enum IdleWaiter {
        /// Registered, not yet suspended.
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        /// Its timeout passed before it suspended.
        case expired
    }

    private struct State {
        var running: [Int: Running] = [:]
        var nextID = 0
        var isCancelled = false
        /// The first error a job threw: it stops the stage.
        var failure: (any Error)?
        var idleWaiters: [Int: IdleWaiter] = [:]
        var nextWaiterID = 0
    }

    private let state = Mutex(State())
    private let failed = Atomic<Bool>(false)
    /// Called once, by the first job that fails (the stage stops reading).
    private let onFailure: @Sendable () -> Void

    init(onFailure: @escaping @Sendable () -> Void) {
        self.onFailure = onFailure
    }

    /// Whether a job failed (read for each message: no lock).
    var hasFailed: Bool { self.failed.load(ordering: .acquiring) }

    /// The first error a job threw, if any.
    var failure: (any Error)? { self.state.withLock { $0.failure } }

    /// Runs `body` in a new task as a tracked job. A job started after ``cancelAll()`` starts cancelled.
    ///
    /// - Parameter isOwned: Whether the member still owns the job's message; ``cancelDisowned()`` cancels the job
    ///   once it says no.
    func start(
        _ context: JobContext,
        isOwned: @escaping @Sendable () -> Bool = { true },
        _ body: @escaping @Sendable () async throws -> Void
    ) {
        let id = self.state.withLock { state in
            defer { state.nextID += 1 }
            state.running[state.nextID] = Running(context: context, isOwned: isOwned)
            return state.nextID
        }
        let task = Task {
            do {
                try await body()
            } catch {
                // A job cancelled because its partition was revoked (or at shutdown) and stopped by the
                // cancellation — in its handler, or in a send the cancellation refused — is handed back
                // uncommitted: the partition's owner runs it again. Any other error stops the stage.
                if !(Task.isCancelled && Self.isCancellation(error)) { self.fail(error) }
            }
            self.finish(id)
        }
        let cancel = self.state.withLock { state -> Bool in
            // The task may have ended already: then there is nothing to keep.
            guard state.running[id] != nil else { return false }
            state.running[id]?.task = task
            return state.isCancelled
        }
        if cancel { task.cancel() }
    }

    /// Whether `error` is a cancellation: Swift's, or a send the producer refused because its task was cancelled.
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        return (error as? KafkaError)?.code == .cancelled
    }

    /// Cancels every running job, and every job started from now on.
    func cancelAll() {
        let tasks = self.state.withLock { state in
            state.isCancelled = true
            return state.running.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    /// Cancels the running jobs whose messages this member no longer owns (their partitions were revoked, or
    /// lost when the member could not reach the group): their new owners run them again from the committed
    /// offset, so whatever these would still do is wasted (upstream requests) or repeated (outputs).
    ///
    /// - Returns: How many jobs were cancelled.
    @discardableResult
    func cancelDisowned() -> Int {
        let running = self.state.withLock { $0.running.values.map { ($0.isOwned, $0.task) } }
        var cancelled = 0
        for (isOwned, task) in running where !isOwned() {
            task?.cancel()
            cancelled += 1
        }
        return cancelled
    }

    /// Waits until no job runs, or until `timeout` passed. Not ended by cancelling the caller: the stage waits
    /// out its jobs even when its own task was cancelled.
    ///
    /// - Returns: Whether every job ended.
    func waitUntilIdle(timeout: Duration) async -> Bool {
        let waiterID: Int? = self.state.withLock { state in
            guard !state.running.isEmpty else { return nil }
            defer { state.nextWaiterID += 1 }
            state.idleWaiters[state.nextWaiterID] = .pending
            return state.nextWaiterID
        }
        guard let waiterID else { return true }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire(waiterID)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = self.state.withLock { state in
                // Gone: the last job ended meanwhile (and took the waiters); expired: the timeout passed.
                guard case .pending? = state.idleWaiters[waiterID] else {
                    state.idleWaiters[waiterID] = nil
                    return true
                }
                state.idleWaiters[waiterID] = .waiting(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return self.state.withLock { $0.running.isEmpty }
    }

    /// The jobs running now, longest-running first.
    func snapshot() -> [JobContext] {
        self.state.withLock { $0.running.values.map(\.context) }.sorted { $0.started < $1.started }
    }

    private func expire(_ id: Int) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            switch state.idleWaiters[id] {
            case .pending?:
                state.idleWaiters[id] = .expired
                return nil
            case .waiting(let continuation)?:
                state.idleWaiters[id] = nil
                return continuation
            case .expired?, nil:
                return nil
            }
        }
        waiter?.resume()
    }

    private func fail(_ error: any Error) {
        let isFirst = self.state.withLock { state in
            // After cancelAll, a job's failure is the cancellation's (a send refused as cancelled), not the stage's.
            guard state.failure == nil, !state.isCancelled else { return false }
            state.failure = error
            return true
        }
        guard isFirst else { return }
        self.failed.store(true, ordering: .releasing)
        self.onFailure()
    }

    private func finish(_ id: Int) {
        let waiters: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
            state.running[id] = nil
            guard state.running.isEmpty, !state.idleWaiters.isEmpty else { return [] }
            defer { state.idleWaiters = [:] }
            return state.idleWaiters.values.compactMap { waiter in
                if case .waiting(let continuation) = waiter { continuation } else { nil }
            }
        }
        for waiter in waiters { waiter.resume() }
    }
}
