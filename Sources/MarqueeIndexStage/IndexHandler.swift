public import Logging
import MarqueeCore
public import MarqueePipeline
public import MarqueeStore
public import ServiceLifecycle
import Synchronization

/// How the indexer gathers records into store transactions.
public struct IndexSettings: Sendable {
    /// The most records in one transaction. Default: 500.
    public var batchSize = 500
    /// How long the first record of a batch waits for others before the batch is written anyway. Default: 200 ms.
    public var maxWait: Duration = .milliseconds(200)
    /// Batches written at once, each in its own transaction (PostgreSQL: on its own connection; SQLite writes
    /// one at a time whatever this says). Rows are written in key order, so concurrent batches sharing rows wait
    /// for each other instead of deadlocking. Default: 2.
    public var writers = 2
    /// Test fault: after this many committed batches, the process kills itself (SIGKILL) before handing the
    /// batch's offsets to the consumer — the crash between the store commit and the offset commit.
    public var crashAfterCommits: Int? = nil

    public init() {}
}

/// The index stage's handler: each record joins a batch, the batch is upserted in one store transaction, and
/// every job of the batch returns only after that transaction committed — so the stage commits an offset only
/// for records already in the store (docs/design.md, "Guarantees").
///
/// | what | outcome |
/// |---|---|
/// | a payload that is not a record | poison (DLQ, bytes untouched) |
/// | a record its kind's schema refuses (``StoreError`` (``StoreError/Code-swift.enum/invalidRecord``)) | permanent (DLQ with the field at fault) |
/// | the store unreachable, refusing connections, or its schema newer than this program | the stage pauses (not ready); nothing goes to the DLQ; the jobs run again when it is back |
/// | the store rejects a batch's data | each record is written alone, so only the records at fault are dead-lettered |
/// | a write conflict (serialization failure, deadlock) | transient (retry tier) |
///
/// The schema is migrated before the first batch (and again after the store was down).
///
/// The handler is also the service that writes the batches (``run()``): list it among the worker's services, so
/// it starts before the stage and stops after it.
public final class IndexHandler: StageHandler, Service {
    private let store: Store
    private let batcher: Batcher
    private let logger: Logger

    public init(store: Store, settings: IndexSettings = IndexSettings(), logger: Logger) {
        self.store = store
        self.logger = logger
        self.batcher = Batcher(store: store, settings: settings, logger: logger)
    }

    public func handle(_ job: StageJob) async throws -> [StageOutput] {
        let record: Record
        do {
            record = try Record.decode(job.payload)
        } catch {
            throw error.code == .notJSON ? StageError.poison(error) : StageError.permanent(error.description)
        }
        let prepared: Store.PreparedRecord
        do {
            prepared = try Store.prepare(record, refresh: job.envelope.refresh)
        } catch {
            throw StageError.permanent(error.description)
        }
        try await self.batcher.submit(prepared)
        return []
    }

    /// Batches written so far, and the rows they wrote (for logs and tests).
    public var totals: (batches: Int, rowsWritten: Int, rowsUnchanged: Int) { self.batcher.totals }

    /// Records submitted and not yet in a batch being written.
    public var waitingRecords: Int { self.batcher.waitingRecords }

    /// Writes the batches, each in a task of this one's, until graceful shutdown finds nothing left to write (or
    /// until cancelled; records still waiting then fail as transient).
    public func run() async throws {
        await self.batcher.run()
    }
}

/// Gathers submitted records and writes them in batches, up to ``IndexSettings/writers`` transactions at a time.
///
/// The lock decides (``nextAction(_:)``); ``run()`` acts, starting each write and each timer as a child task.
final class Batcher: Sendable {
    private struct Waiting {
        var record: Store.PreparedRecord
        var continuation: CheckedContinuation<Void, any Error>
        var arrived: ContinuousClock.Instant
    }

    private struct State {
        var waiting: [Waiting] = []
        /// Batches being written (at most ``IndexSettings/writers``).
        var writing = 0
        /// Set while a timer waits to write a partial batch.
        var timerArmed = false
        var migrated = false
        /// Actions decided and not yet taken by ``run()``.
        var pending: [Action] = []
        /// Graceful shutdown began: the actions end once nothing waits and nothing is being written.
        var stopping = false
        /// ``run()`` ended: a record submitted now fails at once.
        var stopped = false
        var batches = 0
        var rowsWritten = 0
        var rowsUnchanged = 0
    }

    private let store: Store
    private let settings: IndexSettings
    private let logger: Logger
    private let state = Mutex(State())
    /// Wakes ``run()`` when actions are pending.
    private let wakeups: AsyncStream<Void>
    private let wakeupInput: AsyncStream<Void>.Continuation

    init(store: Store, settings: IndexSettings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
        (self.wakeups, self.wakeupInput) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    var totals: (batches: Int, rowsWritten: Int, rowsUnchanged: Int) {
        self.state.withLock { ($0.batches, $0.rowsWritten, $0.rowsUnchanged) }
    }

    var waitingRecords: Int { self.state.withLock { $0.waiting.count } }

    /// Returns when the record's batch committed; throws the ``StageError`` its job should end with.
    func submit(_ record: Store.PreparedRecord) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let action = self.state.withLock { state -> Action? in
                guard !state.stopped else { return nil }
                state.waiting.append(Waiting(record: record, continuation: continuation, arrived: .now))
                return self.nextAction(&state)
            }
            guard let action else { return continuation.resume(throwing: Self.stoppedError) }
            self.perform(action)
        }
    }

    private static let stoppedError = StageError.transient("the indexer stopped before the record's batch was written")

    private enum Action {
        case none
        case write([Waiting])
        case armTimer(ContinuousClock.Instant)
    }

    /// Performs the actions until graceful shutdown finds the batcher idle, or until cancelled.
    func run() async {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await _ in self.wakeups {
                    let actions = self.state.withLock { state in
                        defer { state.pending.removeAll() }
                        return state.pending
                    }
                    for action in actions {
                        switch action {
                        case .none: break
                        case .write(let batch): group.addTask { await self.write(batch) }
                        case .armTimer(let deadline): group.addTask { await self.timer(deadline) }
                        }
                    }
                    self.finishIfIdle()
                }
                // Graceful: nothing is being written, only timers of partial batches are left. Cancelled: the
                // writes are cancelled too, and their records fail.
                group.cancelAll()
            }
        } onGracefulShutdown: {
            // Partial batches are written now rather than at their timers.
            let action = self.state.withLock { state -> Action in
                state.stopping = true
                return self.nextAction(&state)
            }
            self.perform(action)
            self.finishIfIdle()
        }
        // Every child has ended, so nothing but a submission decides an action now, and it sees `stopped`.
        let left = self.state.withLock { state -> [Waiting] in
            state.stopped = true
            var left = state.waiting
            for case .write(let batch) in state.pending { left += batch }
            state.waiting.removeAll()
            state.pending.removeAll()
            return left
        }
        for waiting in left { waiting.continuation.resume(throwing: Self.stoppedError) }
    }

    /// What to do now: write a full (or overdue) batch, or any once shutdown began, if a writer is free; else arm
    /// the timer for a partial one.
    private func nextAction(_ state: inout State) -> Action {
        guard state.writing < self.settings.writers, let oldest = state.waiting.first?.arrived else { return .none }
        let deadline = oldest + self.settings.maxWait
        if state.waiting.count >= self.settings.batchSize || deadline <= .now || state.stopping {
            state.writing += 1
            let count = min(state.waiting.count, self.settings.batchSize)
            let batch = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(count)
            return .write(batch)
        }
        guard !state.timerArmed else { return .none }
        state.timerArmed = true
        return .armTimer(deadline)
    }

    /// Hands `action` to ``run()``; a batch it can no longer take fails (its loop ended).
    private func perform(_ action: Action) {
        if case .none = action { return }
        let refused = self.state.withLock { state -> Bool in
            guard !state.stopped else { return true }
            state.pending.append(action)
            return false
        }
        if refused, case .write(let batch) = action {
            for waiting in batch { waiting.continuation.resume(throwing: Self.stoppedError) }
        }
        self.wakeupInput.yield()
    }

    private func timer(_ deadline: ContinuousClock.Instant) async {
        try? await Task.sleep(until: deadline)
        let next = self.state.withLock { state -> Action in
            state.timerArmed = false
            return self.nextAction(&state)
        }
        self.perform(next)
        self.finishIfIdle()
    }

    private func write(_ batch: [Waiting]) async {
        await self.writeBatch(batch)
        let next = self.state.withLock { state -> Action in
            state.writing -= 1
            return self.nextAction(&state)
        }
        self.perform(next)
        self.finishIfIdle()
    }

    /// Ends ``run()``'s actions once shutdown began and nothing waits or is being written.
    private func finishIfIdle() {
        let idle = self.state.withLock { $0.stopping && $0.waiting.isEmpty && $0.pending.isEmpty && $0.writing == 0 }
        if idle { self.wakeupInput.finish() }
    }

    private func writeBatch(_ batch: [Waiting]) async {
        do {
            try await self.migrateOnce()
            let summary = try await self.store.write(batch.map(\.record))
            let batches = self.state.withLock { state in
                state.batches += 1
                state.rowsWritten += summary.rowsWritten
                state.rowsUnchanged += summary.rowsUnchanged
                return state.batches
            }
            if let crash = self.settings.crashAfterCommits, batches >= crash {
                self.logger.critical("test fault: killing the process after the store commit, before the offset commit")
                crashNow()
            }
            if self.logger.logLevel <= .debug {
                self.logger.debug(
                    "batch stored",
                    metadata: [
                        "marquee.batch.records": "\(batch.count)",
                        "marquee.batch.rows_written": "\(summary.rowsWritten)",
                        "marquee.batch.rows_unchanged": "\(summary.rowsUnchanged)",
                        "marquee.batch.links": "\(summary.links)",
                    ]
                )
            }
            for waiting in batch { waiting.continuation.resume() }
        } catch let error as StoreError where error.code == .rejected && batch.count > 1 {
            // Find the records at fault: each alone (the others commit), the faulty ones to the DLQ.
            self.logger.warning(
                "the store rejected a batch; writing its \(batch.count) records one by one",
                metadata: ["marquee.error": "\(error.message)"]
            )
            for waiting in batch { await self.writeBatch([waiting]) }
        } catch {
            let stageError = self.stageError(error)
            for waiting in batch { waiting.continuation.resume(throwing: stageError) }
        }
    }

    private func migrateOnce() async throws {
        guard !self.state.withLock({ $0.migrated }) else { return }
        let report = try await self.store.migrate()
        self.state.withLock { $0.migrated = true }
        self.logger.notice(
            "store ready",
            metadata: [
                "marquee.store": "\(self.store.location)", "marquee.store.version": "\(report.version)",
                "marquee.store.applied": "\(report.applied.map(String.init).joined(separator: ","))",
            ]
        )
    }

    private func stageError(_ error: any Error) -> StageError {
        switch error {
        case let error as StoreError:
            switch error.code {
            case .unavailable, .migration, .invalidLocation:
                self.state.withLock { $0.migrated = false }  // it may come back empty (a new database)
                return .dependencyDown("the store", error.message, credentialsRefused: error.refusedLogin)
            case .rejected, .invalidQuery, .invalidRecord: return .permanent(error.message)
            case .conflict: return .transient(error.message)
            }
        case is CancellationError: return .transient("cancelled at shutdown")
        default:
            // The store layer turns every failure of the database into a StoreError; anything else came from
            // below it (the driver, the runtime) while writing, and is the store's trouble, not the batch's.
            return .dependencyDown("the store", String(describing: error))
        }
    }
}

#if canImport(Glibc)
import Glibc

private func crashNow() -> Never {
    kill(getpid(), SIGKILL)
    fatalError("SIGKILL did not stop the process")
}
#endif
