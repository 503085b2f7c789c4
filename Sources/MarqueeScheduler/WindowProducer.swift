public import Logging
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The scheduler service of `marquee-producer`: leader election, the window state, and each window's jobs
/// enqueued once (docs/producer.md).
///
/// Every replica joins one consumer group on the one-partition state topic; the member assigned the partition
/// is the leader, reads the topic from its start (nothing is ever committed), writes a probe and reads it back,
/// then fires windows as ``WindowLedger`` decides: a claim, read back to see that it is the window's first, the
/// jobs with deterministic ids, then `done`. Standbys only hold their place in the group.
///
/// As a `Service`, it runs until graceful shutdown: the window in progress is finished, then it leaves the group
/// (a standby takes over at once) and flushes.
public final class WindowProducer: Service, Sendable {
    private let schedules: [Schedule]
    private let configuration: WindowProducerConfiguration
    private let clock: any SchedulerClock
    private let metrics: ProducerMetrics?
    private let logger: Logger
    private let startedAt: Int64
    private let stopping = OneShotSignal()
    private let state = Mutex(State())

    private struct Waiter {
        let id: Int
        let offset: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var ledger = WindowLedger()
        var status = ProducerStatus()
        var waiters: [Waiter] = []
        var cancelledWaiters: Set<Int> = []
        var nextWaiter = 0
        /// Winning claims so far (for ``WindowProducerConfiguration/crashPoint``).
        var wins = 0
        /// The current term, while this replica leads.
        var term: Term?
        /// Set by ``stop()``: no term starts any more.
        var isStopping = false
        var failure: (any Error)?
    }

    /// One term of leadership: from the state partition's assignment to its revocation or shutdown.
    private final class Term: Sendable {
        /// Fired when the partition is revoked: the term ends at once, with no window half-sent.
        let ended = OneShotSignal()
        /// Fired when the term's leader loop has returned.
        let finished = OneShotSignal()
    }

    /// - Parameters:
    ///   - schedules: The schedule file's schedules.
    ///   - clock: The wall clock (tests inject their own).
    ///   - metrics: Where outcomes are counted, if anywhere.
    public init(
        schedules: [Schedule],
        configuration: WindowProducerConfiguration,
        clock: any SchedulerClock = SystemSchedulerClock(),
        metrics: ProducerMetrics? = nil,
        logger: Logger
    ) {
        self.schedules = schedules
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "marquee.owner"] = "\(configuration.owner)"
        self.logger = logger
        self.startedAt = clock.now()
    }

    /// Leadership and readiness now.
    public var status: ProducerStatus { self.state.withLock { $0.status } }

    /// Checks that the fetch topic exists and creates the state topic (one partition, compacted) if it does not.
    /// ``run()`` does it too; calling it first lets a process report a missing topic before it starts serving.
    ///
    /// - Throws: A ``SchedulerError`` when a topic is missing or wrong, a ``KafkaError`` when no broker answers.
    public func prepare() async throws {
        let admin = try KafkaAdmin(configuration: self.configuration.kafka, logger: self.logger)
        try await self.prepareTopics(admin)
    }

    public func run() async throws {
        try await self.prepare()

        var producerConfiguration = KafkaProducerConfiguration(kafka: self.configuration.kafka)
        producerConfiguration.deliveryTimeout = min(.seconds(30), self.configuration.claimTimeout / 4)
        producerConfiguration.linger = .milliseconds(1)
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: self.logger)

        var consumerConfiguration = KafkaConsumerConfiguration(
            kafka: self.configuration.kafka,
            groupID: self.configuration.group,
            topics: [self.configuration.stateTopic]
        )
        consumerConfiguration.offsetReset = .earliest
        consumerConfiguration.sessionTimeout = self.configuration.sessionTimeout
        consumerConfiguration.heartbeatInterval = min(.seconds(3), self.configuration.sessionTimeout / 3)
        let consumer: KafkaConsumer
        do {
            consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: self.logger)
        } catch {
            await producer.close()
            throw error
        }

        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                let (terms, starts) = AsyncStream.makeStream(of: Term.self)
                group.addTask { await self.readState(consumer) }
                group.addTask { await self.runTerms(terms, producer: producer) }
                group.addTask {
                    await self.follow(consumer.rebalances, starts: starts)
                    starts.finish()
                    // No more rebalances: the consumer has closed, so there is nothing left to lead.
                    self.stop()
                }
                // Graceful shutdown or a failure: the window in progress is finished, then the group is left
                // (a standby takes over at once).
                await self.stopping.waitUnlessCancelled()
                let term = self.state.withLock { $0.term }
                await term?.finished.waitUnlessCancelled()
                await consumer.close()
            }
        } onGracefulShutdown: {
            self.stop()
        }
        await producer.close()
        if let failure = self.state.withLock({ $0.failure }) { throw failure }
    }

    /// Checks the fetch topic exists and creates the state topic (one partition, compacted).
    private func prepareTopics(_ admin: KafkaAdmin) async throws {
        let stateTopic = self.configuration.stateTopic
        let fetchTopic = self.configuration.fetchTopic
        guard
            try await admin.listTopics().contains(where: {
                $0.name == fetchTopic && $0.error == nil && !$0.partitions.isEmpty
            })
        else {
            throw SchedulerError(
                .topic,
                "the topic \(fetchTopic) does not exist: create the stages' topics first (marquee topics create-stages)"
            )
        }
        do {
            // Compacted: each schedule's latest record stays for ever. Claims stay uncompacted for an hour, far
            // longer than any claim takes to be read back.
            try await admin.createTopics([
                .init(
                    name: stateTopic,
                    partitions: 1,
                    replicationFactor: self.configuration.stateReplicationFactor,
                    configs: ["cleanup.policy": "compact", "min.compaction.lag.ms": "3600000"]
                )
            ])
        } catch {
            self.logger.warning("the broker refused the state topic's settings; creating it without them: \(error)")
            try await admin.createTopics([
                .init(name: stateTopic, partitions: 1, replicationFactor: self.configuration.stateReplicationFactor)
            ])
        }
        guard let state = try await admin.listTopics().first(where: { $0.name == stateTopic }),
            state.partitions.count == 1
        else {
            throw SchedulerError(
                .topic,
                "the state topic \(stateTopic) must have exactly one partition (its order decides which claim wins)"
            )
        }
    }

    /// Ends leadership after the window in progress; ``run()`` then leaves the group. Under the lock, so that no
    /// term starts once ``run()`` has looked for the current one.
    private func stop() {
        self.state.withLock { $0.isStopping = true }
        self.stopping.fire()
    }

    // MARK: - Reading the state topic

    private func readState(_ consumer: KafkaConsumer) async {
        do {
            for try await message in consumer.messages {
                let marker = WindowMarker.decode(message.value)
                let ready: [Waiter] = self.state.withLock { state in
                    if let marker {
                        state.ledger.apply(marker, offset: message.offset)
                    } else {
                        state.ledger.advance(to: message.offset)
                    }
                    let applied = state.ledger.appliedOffset
                    let ready = state.waiters.filter { $0.offset <= applied }
                    state.waiters.removeAll { $0.offset <= applied }
                    return ready
                }
                for waiter in ready { waiter.continuation.resume() }
            }
        } catch {
            self.fail(error)
        }
        // No more reads: nobody waiting on one may wait for ever.
        let waiters = self.state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(throwing: CancellationError()) }
    }

    /// Returns once the state topic was read through `offset`.
    ///
    /// - Throws: `CancellationError` when `term` ends first (the partition is gone: nothing more is read).
    private func waitApplied(through offset: Int64, term: Term) async throws {
        let id = self.state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Bool? = self.state.withLock { state in
                    if state.cancelledWaiters.remove(id) != nil { return false }
                    if state.ledger.appliedOffset >= offset { return true }
                    if state.term !== term { return false }
                    state.waiters.append(Waiter(id: id, offset: offset, continuation: continuation))
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiter: Waiter? = self.state.withLock { state in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index)
                }
                state.cancelledWaiters.insert(id)
                return nil
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    // MARK: - Leadership

    private func follow(_ rebalances: AsyncStream<KafkaRebalanceEvent>, starts: AsyncStream<Term>.Continuation) async {
        let partition = KafkaTopicPartition(topic: self.configuration.stateTopic, partition: 0)
        for await event in rebalances {
            switch event {
            case .assigned(let partitions):
                self.state.withLock { $0.status.hasJoined = true }
                if partitions.contains(partition) {
                    await self.endTerm()
                    if let term = self.beginTerm() { starts.yield(term) }
                } else {
                    await self.endTerm()
                    self.logger.info("standing by: another replica leads")
                }
            case .revoked(let partitions):
                if partitions.contains(partition) { await self.endTerm() }
            }
            self.metrics?.update(self.status)
        }
        await self.endTerm()
    }

    /// Runs each term's leader loop, one after the other, in this task.
    private func runTerms(_ terms: AsyncStream<Term>, producer: KafkaProducer) async {
        for await term in terms {
            await self.lead(term, producer: producer)
            term.finished.fire()
        }
    }

    /// The term that starts now, or `nil` once the producer is stopping.
    private func beginTerm() -> Term? {
        self.state.withLock { state in
            guard !state.isStopping else { return nil }
            let term = Term()
            state.term = term
            state.status.isLeader = true
            return term
        }
    }

    /// Ends the current term at once (the partition is gone: nothing can be read back any more). A window whose
    /// claim already won is still sent and confirmed.
    private func endTerm() async {
        let (term, waiters): (Term?, [Waiter]) = self.state.withLock { state in
            defer { state.term = nil }
            guard state.term != nil else { return (nil, []) }
            // Only the term's leader waits for reads: it is told that none will come.
            defer { state.waiters = [] }
            return (state.term, state.waiters)
        }
        guard let term else { return }
        term.ended.fire()
        for waiter in waiters { waiter.continuation.resume(throwing: CancellationError()) }
        await term.finished.waitUnlessCancelled()
        self.state.withLock { state in
            state.status.isLeader = false
            state.status.isStateLoaded = false
        }
        self.metrics?.update(self.status)
        self.logger.notice("no longer the leader")
    }

    /// Leads until the term ends or the producer stops; the window in progress is always finished.
    private func lead(_ term: Term, producer: KafkaProducer) async {
        do {
            self.metrics?.update(self.status)
            self.logger.notice("elected leader: reading the window state")
            let probe = WindowMarker(
                phase: .probe,
                schedule: "",
                window: 0,
                owner: self.configuration.owner,
                at: self.clock.now()
            )
            let report = try await producer.send(self.stateMessage(probe))
            try await self.waitApplied(through: report.offset, term: term)
            self.state.withLock { $0.status.isStateLoaded = true }
            self.metrics?.update(self.status)
            self.logStateLoaded()
            while !Task.isCancelled, !self.stopping.isFired, !term.ended.isFired {
                let now = self.clock.now()
                let claimTimeout = self.claimTimeoutMilliseconds
                let action = self.state.withLock {
                    $0.ledger.next(
                        schedules: self.schedules,
                        now: now,
                        since: self.startedAt,
                        claimTimeout: claimTimeout
                    )
                }
                switch action {
                case .wait(let until):
                    for schedule in self.schedules {
                        self.metrics?.next(
                            schedule: schedule.name,
                            window: schedule.timing.window(after: now, in: schedule.calendar)
                        )
                    }
                    // At most a minute at a time, so a stepped wall clock is noticed.
                    await self.sleep(until: min(until, now + 60_000), term: term)
                case .fire(let schedule, let window, let supersedes, let skips):
                    try await self.fire(
                        schedule: schedule,
                        window: window,
                        supersedes: supersedes,
                        skips: skips,
                        producer: producer,
                        term: term
                    )
                }
            }
        } catch {
            if !(error is CancellationError) && !Task.isCancelled && !self.stopping.isFired && !term.ended.isFired {
                self.fail(error)
            }
        }
    }

    private var claimTimeoutMilliseconds: Int64 {
        let (seconds, attoseconds) = self.configuration.claimTimeout.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Sleeps until `instant`, or until the producer stops or the term ends, whichever comes first.
    private func sleep(until instant: Int64, term: Term) async {
        let clock = self.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: instant) }
            group.addTask { await self.stopping.waitUnlessCancelled() }
            group.addTask { await term.ended.waitUnlessCancelled() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Claims a window; when the claim wins, sends its jobs (unless it skips the window) and confirms.
    private func fire(
        schedule name: String,
        window: Int64,
        supersedes: Int64?,
        skips: Bool,
        producer: KafkaProducer,
        term: Term
    ) async throws {
        guard let schedule = self.schedules.first(where: { $0.name == name }) else { return }
        var logger = self.logger
        logger[metadataKey: "marquee.schedule"] = "\(name)"
        logger[metadataKey: "marquee.window"] = "\(Self.iso(window))"
        var skips = skips
        var jobs: [FetchJob] = []
        if !skips {
            do {
                jobs = try schedule.jobs(for: window)
            } catch {
                logger.error("the window's jobs cannot be built; skipping it: \(error)")
                skips = true
            }
        }
        let claim = WindowMarker(
            phase: .claimed,
            schedule: name,
            window: window,
            owner: self.configuration.owner,
            at: self.clock.now(),
            supersedes: supersedes,
            jobs: jobs.count,
            skips: skips
        )
        let claimed = try await producer.send(self.stateMessage(claim))
        try await self.waitApplied(through: claimed.offset, term: term)
        guard self.state.withLock({ $0.ledger.isWinner(schedule: name, window: window, offset: claimed.offset) }) else {
            let winner = self.state.withLock { $0.ledger.state(schedule: name, window: window)?.winner?.owner }
            logger.notice("another replica claimed the window first", metadata: ["marquee.winner": "\(winner ?? "?")"])
            self.metrics?.record(schedule: name, window: window, outcome: .lost, jobs: 0)
            return
        }
        // Read back too late (a slow broker, a paused process): the claim may be taken over before this process
        // could confirm, so it sends nothing; the window is taken over when the claim times out (by this process
        // too, if it still leads).
        let readBack = self.clock.now()
        guard readBack - claim.at <= self.claimTimeoutMilliseconds / 4 else {
            logger.warning(
                "read the claim back too late to send before a takeover; leaving the window to it",
                metadata: ["marquee.delay_ms": "\(readBack - claim.at)"]
            )
            return
        }
        let wins = self.state.withLock { state in
            state.wins += 1
            return state.wins
        }
        if self.configuration.crashPoint == .claimed(wins) { Self.crash(logger, "after the claim, before the jobs") }
        let crashAfterSending = self.configuration.crashPoint == .sent(wins)
        // The window is this process's now: send and confirm even if leadership ends meanwhile (left half-done,
        // it would be taken over and sent again).
        let messages = jobs.enumerated().map { index, job in
            let id = schedule.jobID(window: window, index: index)
            // The trace follows from the id, so a window sent again keeps its jobs' trace ids.
            return KafkaProducerMessage(
                topic: self.configuration.fetchTopic,
                key: Array(job.dedupeKey.utf8),
                value: job.encoded(),
                headers: Envelope.root(id: id, traceparent: TraceContext.make(seed: id.rawValue), refresh: .schedule)
                    .kafkaHeaders + [
                        KafkaHeader(key: "marquee-schedule", value: name),
                        KafkaHeader(key: "marquee-window", value: Self.iso(window)),
                    ]
            )
        }
        let done = WindowMarker(
            phase: .done,
            schedule: name,
            window: window,
            owner: self.configuration.owner,
            at: self.clock.now(),
            jobs: jobs.count,
            skips: skips
        )
        let stateMessage = self.stateMessage(done)
        // Neither the end of the term nor shutdown cancels this task, so the sends below always complete.
        if !messages.isEmpty { try await producer.deliver(messages) }
        if crashAfterSending { Self.crash(logger, "after the jobs were acknowledged, before the confirmation") }
        let confirmed = try await producer.send(stateMessage).offset
        let outcome: ProducerMetrics.Outcome = skips ? .skipped : (supersedes == nil ? .fired : .resent)
        self.metrics?.record(schedule: name, window: window, outcome: outcome, jobs: jobs.count)
        logger.notice(
            "window \(outcome.rawValue)",
            metadata: [
                "marquee.jobs": "\(jobs.count)",
                "marquee.root.first": "\(jobs.isEmpty ? "" : schedule.jobID(window: window, index: 0).rawValue)",
            ]
        )
        try await self.waitApplied(through: confirmed, term: term)
    }

    /// The test fault of ``WindowProducerConfiguration/crashPoint``.
    private static func crash(_ logger: Logger, _ where: String) -> Never {
        logger.critical("test fault: killing the process \(`where`)")
        kill(getpid(), SIGKILL)
        fatalError("SIGKILL did not end the process")
    }

    private func stateMessage(_ marker: WindowMarker) -> KafkaProducerMessage {
        KafkaProducerMessage(
            topic: self.configuration.stateTopic,
            key: Array(marker.key.utf8),
            value: marker.encoded(),
            headers: []
        )
    }

    private func logStateLoaded() {
        let summary = self.state.withLock { state in
            self.schedules.map { schedule in
                "\(schedule.name)=" + (state.ledger.latestWindow(schedule: schedule.name).map(Self.iso) ?? "none")
            }
        }
        self.logger.notice(
            "leading: window state read",
            metadata: ["marquee.latest": "\(summary.joined(separator: ", "))"]
        )
        let catchUps = self.state.withLock { state in
            state.ledger.catchUp(schedules: self.schedules, now: self.clock.now())
        }
        self.metrics?.catchUp(catchUps, schedules: self.schedules)
        for catchUp in catchUps {
            self.logger.notice(
                "catching up \(catchUp.sent.count) missed windows of schedule '\(catchUp.schedule)', oldest first",
                metadata: [
                    "marquee.schedule": "\(catchUp.schedule)",
                    "marquee.first": "\(catchUp.sent.first.map(Self.iso) ?? "-")",
                    "marquee.last": "\(catchUp.sent.last.map(Self.iso) ?? "-")",
                ]
            )
            if let range = catchUp.notSentRange {
                let count =
                    catchUp.notSent >= WindowLedger.countedBeyond ? "at least \(catchUp.notSent)" : "\(catchUp.notSent)"
                let message =
                    "schedule '\(catchUp.schedule)' missed \(count) older windows that it will not send "
                    + "(its catch_up keeps the latest \(catchUp.sent.count)): they need a backfill"
                self.logger.warning(
                    "\(message)",
                    metadata: [
                        "marquee.schedule": "\(catchUp.schedule)",
                        "marquee.first": "\(Self.iso(range.lowerBound))",
                        "marquee.last": "\(Self.iso(range.upperBound))",
                    ]
                )
            }
        }
    }

    private func fail(_ error: any Error) {
        self.logger.error("the producer stops: \(error)")
        self.state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
        self.stop()
    }

    /// `2024-05-30T01:00:00Z`, or with milliseconds when the window has them.
    static func iso(_ window: Int64) -> String { UTCInstant(milliseconds: window).iso8601 }

}
