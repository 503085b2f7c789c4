import DequeModule
public import Logging
import MarqueeCore
import MarqueeStore
import Synchronization

/// The settings of ``SourceLimits``.
public struct SourceLimitsConfiguration: Sendable {
    public var limits: [SourceLimit]
    /// The stage the worker belongs to (members are counted per stage).
    public var stage: String
    /// This worker's name among the members (unique: host, process id and a random part).
    public var member: String
    public var host: String
    /// How often the worker says it is alive and reads the paused sources, blocks and member count. Default: 1 s.
    public var heartbeatInterval: Duration = .seconds(1)
    /// A worker not heard from for this long is no longer counted (the consumer group's session timeout).
    /// Default: 45 s.
    public var memberExpiry: Duration = .seconds(45)
    /// The longest a call to the coordination store may take before the worker does without it. Default: 2 s.
    public var storeTimeout: Duration = .seconds(2)
    /// The longest the first heartbeat may take (it migrates the store's schema when needed); requests wait for it,
    /// so a worker starting while the store is slow learns the member count before it paces alone. Default: 15 s.
    public var startupTimeout: Duration = .seconds(15)
    /// After a failed call, how long the worker does without the store before it tries again. Default: 2 s.
    public var storeRetryInterval: Duration = .seconds(2)
    /// How far ahead a worker holds request slots: enough to hide the store's latency, little enough that a
    /// worker that dies wastes almost nothing. Default: 0.5 s.
    public var lookahead: Duration = .milliseconds(500)
    /// How many slots one reservation takes at most, as a time at the limit's rate. Default: 0.1 s.
    public var batch: Duration = .milliseconds(100)
    /// An outage: at least ``outageMinimumFailures`` requests, and at least ``outageFailureRatio`` of them,
    /// failed (5xx, timeouts, connection failures) within ``outageWindow``; or ``outageConsecutiveFailures`` in a row.
    public var outageWindow: Duration = .seconds(10)
    public var outageMinimumFailures = 10
    public var outageFailureRatio = 0.5
    /// An outage too: this many requests in a row failed, however slowly they came (an upstream answering 503
    /// with `Retry-After` slows its own requests to one a second). Default: 5.
    public var outageConsecutiveFailures = 5
    /// The wait before a paused source's first probe; it doubles after each failed probe, up to
    /// ``probeIntervalMaximum``. Default: 5 s, 60 s.
    public var probeInterval: Duration = .seconds(5)
    public var probeIntervalMaximum: Duration = .seconds(60)

    public init(limits: [SourceLimit], stage: String, member: String, host: String) {
        self.limits = limits
        self.stage = stage
        self.member = member
        self.host = host
    }

    /// The wait after `probes` failed probes.
    func probeBackoff(_ probes: Int) -> Duration {
        var wait = self.probeInterval
        for _ in 0..<min(probes, 16) where wait < self.probeIntervalMaximum { wait *= 2 }
        return min(wait, self.probeIntervalMaximum)
    }
}

/// What a worker tells ``SourceLimits`` about a request it was admitted for.
public enum SourceRequestResult: Sendable {
    /// An answer that says nothing against the source (2xx, 304, 404, …).
    case answered
    /// A 429, with the upstream's `Retry-After` if any.
    case throttled(retryAfter: Duration?)
    /// A 5xx, a timeout, a connection failure: counts towards an outage.
    case failed(String)
    /// The key was refused (401/403, KOFIC's key error): the source pauses at once.
    case refused(String)
}

/// What ``SourceLimits`` reports as it happens (for metrics).
public enum SourceLimitEvent: Sendable {
    /// A request was admitted after waiting `waited` for the limit.
    case admitted(source: String, waited: Duration)
    case throttled(source: String)
    case paused(source: String, Bool)
    case budgetRemaining(source: String, Int)
}

/// Admission for one request: whether it is a paused source's probe.
public struct SourceTicket: Sendable {
    let index: Int?
    /// The request is the probe of a paused source: its success resumes the source for the pipeline.
    public let isProbe: Bool
}

/// The upstreams' limits, held by every worker of the pipeline together (docs/limits.md).
///
/// - **Rate:** each source and key has one schedule of request slots in the ``Coordination`` (the store): a slot
///   is one interval after the previous one, whichever worker took it, so the pipeline's rate is the limit
///   whatever the number of workers. A worker reserves a few slots ahead (``SourceLimitsConfiguration/lookahead``)
///   for the requests waiting, and starts each request at its slot.
/// - **429 / `Retry-After`:** blocks the schedule for every worker and slows it (a factor that recovers).
/// - **Daily budgets:** one count per key and day in the store, kept across restarts.
/// - **Paused sources:** a refused key or an outage pauses the source in every worker (a circuit in the store,
///   read with each heartbeat); one worker at a time probes it, and a successful probe resumes it everywhere.
/// - **Without the store** (down, or not answering within ``SourceLimitsConfiguration/storeTimeout``): each
///   worker paces alone at the limit divided by the members it last knew of, counts budgets the same way, and
///   pauses on what it sees itself.
///
/// Call ``run()`` for the heartbeat and the schedules (until its task is cancelled), then ``close()``.
public final class SourceLimits: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
        var since: ContinuousClock.Instant
    }

    private struct Circuit {
        var reason: String
        var probeAt: ContinuousClock.Instant
        /// Read from the store (another worker's); `false` for one this worker opened without the store.
        var shared: Bool
    }

    private struct Limit {
        var waiters: Deque<Waiter> = []
        var slots: Deque<ContinuousClock.Instant> = []
        var blockedUntil: ContinuousClock.Instant?
        /// The schedule while the store cannot be reached.
        var localNext: ContinuousClock.Instant = .now
        var factor = 1.0
        var circuit: Circuit?
        var outcomes: Deque<(at: ContinuousClock.Instant, failed: Bool)> = []
        /// Requests that failed in a row, up to now.
        var consecutiveFailures = 0
        var requests: Int64 = 0
        var throttled: Int64 = 0
        var waited: Duration = .zero
        var recentRequests: Deque<ContinuousClock.Instant> = []
        var recentThrottles: Deque<ContinuousClock.Instant> = []
        /// The budget counted alone while the store cannot be reached: the day and the calls taken.
        var localBudget: (day: String, spent: Int) = ("", 0)
        /// The calls spent for the pipeline as the store last said: the day and the count.
        var storeBudget: (day: String, spent: Int) = ("", 0)
    }

    private struct State {
        var limits: [Limit]
        var members = 1
        var nextID: UInt64 = 0
        /// While set, the store is not tried (it failed) before this time.
        var storeFailingUntil: ContinuousClock.Instant?
        var storeWarned = false
        var isClosed = false
        var storeClock = StoreClock()
    }

    private struct Signals: Sendable {
        let reserve: AsyncStream<Void>
        let reserveInput: AsyncStream<Void>.Continuation
        let dispatch: AsyncStream<Void>
        let dispatchInput: AsyncStream<Void>.Continuation
    }

    public let configuration: SourceLimitsConfiguration
    private let coordination: any Coordination
    private let logger: Logger
    private let onEvent: (@Sendable (SourceLimitEvent) -> Void)?
    private let indexBySource: [String: Int]
    private let signals: [Signals]
    private let state: Mutex<State>
    private let startedAt = wallClockMicroseconds()
    /// Fired once the first heartbeat answered or gave up: requests wait for it.
    private let started = OneShotSignal()
    /// Told of each request's start as the schedule grants it (tests measure the pace there).
    private let onGrant: (@Sendable (ContinuousClock.Instant) -> Void)?

    public convenience init(
        configuration: SourceLimitsConfiguration,
        coordination: any Coordination,
        logger: Logger,
        onEvent: (@Sendable (SourceLimitEvent) -> Void)? = nil
    ) {
        self.init(
            configuration: configuration,
            coordination: coordination,
            logger: logger,
            onEvent: onEvent,
            onGrant: nil
        )
    }

    init(
        configuration: SourceLimitsConfiguration,
        coordination: any Coordination,
        logger: Logger,
        onEvent: (@Sendable (SourceLimitEvent) -> Void)?,
        onGrant: (@Sendable (ContinuousClock.Instant) -> Void)?
    ) {
        self.configuration = configuration
        self.coordination = coordination
        self.logger = logger
        self.onEvent = onEvent
        self.onGrant = onGrant
        var index: [String: Int] = [:]
        for (position, limit) in configuration.limits.enumerated() { index[limit.source] = position }
        self.indexBySource = index
        self.signals = configuration.limits.map { _ in
            let reserve = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let dispatch = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            return Signals(
                reserve: reserve.stream,
                reserveInput: reserve.continuation,
                dispatch: dispatch.stream,
                dispatchInput: dispatch.continuation
            )
        }
        self.state = Mutex(State(limits: configuration.limits.map { _ in Limit() }))
    }

    // MARK: - Admission

    /// Waits until a request to `source` may start: the source is not paused (or this request is its probe), its
    /// daily budget has a call left, and its slot in the pipeline's schedule has come.
    ///
    /// - Throws: ``SourceHeld`` when the source is paused or its budget spent (the job should wait, spending no
    ///   attempt); `CancellationError` when the calling task is cancelled or the limits are closed.
    public func admit(_ source: String) async throws -> SourceTicket {
        guard let index = self.indexBySource[source] else { return SourceTicket(index: nil, isProbe: false) }
        if !self.started.isFired {
            await self.started.wait()
            try Task.checkCancellation()
        }
        let limit = self.configuration.limits[index]
        let isProbe = try await self.checkCircuit(index)
        if let budget = limit.dailyBudget {
            try await self.takeBudget(index, budget: budget)
        }
        if limit.rate != nil {
            let since = ContinuousClock.now
            guard await self.waitForSlot(index) else { throw CancellationError() }
            self.onEvent?(.admitted(source: source, waited: .now - since))
        } else {
            self.state.withLock { state in
                state.limits[index].requests += 1
                state.limits[index].recentRequests.append(.now)
            }
            self.onEvent?(.admitted(source: source, waited: .zero))
        }
        return SourceTicket(index: index, isProbe: isProbe)
    }

    /// The members of the stage this worker last heard of (itself included).
    var knownMembers: Int { self.state.withLock { $0.members } }

    /// Whether `source` is paused for the pipeline now, and why.
    public func pause(of source: String) -> String? {
        guard let index = self.indexBySource[source] else { return nil }
        return self.state.withLock { $0.limits[index].circuit?.reason }
    }

    private enum CircuitCheck {
        case closed
        case held(String, Duration)
        /// The probe's time has come; `shared`: the store knows of the pause, and grants the probe to one worker.
        case probe(String, shared: Bool)
    }

    /// Returns whether the request is the source's probe; throws ``SourceHeld`` while the source is paused.
    private func checkCircuit(_ index: Int) async throws -> Bool {
        let limit = self.configuration.limits[index]
        let now = ContinuousClock.now
        let check = self.state.withLock { state -> CircuitCheck in
            guard var circuit = state.limits[index].circuit else { return .closed }
            guard now >= circuit.probeAt else {
                return .held(circuit.reason, max(.seconds(1), circuit.probeAt - now))
            }
            // This worker asks for the probe once; until the answer, its other jobs wait.
            circuit.probeAt = now + self.configuration.probeInterval
            state.limits[index].circuit = circuit
            return .probe(circuit.reason, shared: circuit.shared)
        }
        switch check {
        case .closed:
            return false
        case .held(let reason, let wait):
            throw SourceHeld(source: limit.source, reason: "\(limit.displayName) is paused: \(reason)", wait: wait)
        case .probe(let reason, let shared):
            // A pause this worker opened without the store (cut off from it, as from the upstream) is its own: the
            // store has no circuit to grant a probe of, so the worker probes alone, as it would without the store.
            let claimed: Bool
            if shared, self.storeUsable(now) {
                do {
                    let configuration = self.configuration
                    claimed = try await answer(within: self.configuration.storeTimeout) {
                        try await self.coordination.claimProbe(limit.id) { configuration.probeBackoff($0) }
                    }
                    self.storeAnswered()
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    self.storeFailed(error)
                    claimed = true  // alone: this worker's own probe time has come
                }
            } else {
                claimed = true
            }
            guard claimed else {
                throw SourceHeld(
                    source: limit.source,
                    reason: "\(limit.displayName) is paused: \(reason)",
                    wait: self.configuration.probeInterval
                )
            }
            self.logger.info("probing \(limit.displayName)", metadata: ["marquee.source": "\(limit.source)"])
            return true
        }
    }

    // MARK: - Results

    /// Tells the limits how an admitted request went.
    ///
    /// - Returns: ``SourceHeld`` when the source is paused now (the failure is the source's, not the job's: the job
    ///   should wait rather than spend an attempt); `nil` otherwise.
    @discardableResult
    public func report(_ ticket: SourceTicket, _ result: SourceRequestResult) async -> SourceHeld? {
        guard let index = ticket.index else { return nil }
        let limit = self.configuration.limits[index]
        let now = ContinuousClock.now
        switch result {
        case .answered:
            self.record(index, failed: false, at: now)
            if ticket.isProbe { await self.resume(index) }
            return nil
        case .throttled(let retryAfter):
            self.record(index, failed: false, at: now)
            await self.throttled(index, retryAfter: retryAfter)
            return nil
        case .failed(let reason):
            let outage = self.record(index, failed: true, at: now)
            if let (failures, total) = outage {
                await self.openCircuit(
                    index,
                    reason: failures == total
                        ? "its last \(failures) requests failed (the last: \(reason))"
                        : "\(failures) of its last \(total) requests failed within \(self.configuration.outageWindow) (the last: \(reason))"
                )
            } else if ticket.isProbe {
                self.logger.info("\(limit.displayName) is still down", metadata: ["marquee.error": "\(reason)"])
            }
            return self.held(index)
        case .refused(let reason):
            await self.openCircuit(index, reason: reason)
            return self.held(index)
        }
    }

    /// The upstream says the daily budget is spent before the count does (other users of the key): the rest of
    /// the day is spent for the pipeline.
    public func budgetExhausted(_ source: String) async {
        guard let index = self.indexBySource[source], let budget = self.configuration.limits[index].dailyBudget else {
            return
        }
        let limit = self.configuration.limits[index]
        let (day, resetAt) = limit.budgetDay(at: wallClockMicroseconds())
        self.state.withLock { $0.limits[index].localBudget = (day, budget) }
        self.onEvent?(.budgetRemaining(source: limit.source, 0))
        guard self.storeUsable(.now) else { return }
        do {
            try await answer(within: self.configuration.storeTimeout) {
                try await self.coordination.exhaustBudget(limit.id, day: day, budget: budget, resetAt: resetAt)
            }
            self.storeAnswered()
        } catch {
            self.storeFailed(error)
        }
    }

    /// The hold of a paused source's job, or `nil` when the source is not paused.
    private func held(_ index: Int) -> SourceHeld? {
        let limit = self.configuration.limits[index]
        let now = ContinuousClock.now
        return self.state.withLock { state in
            state.limits[index].circuit.map {
                SourceHeld(
                    source: limit.source,
                    reason: "\(limit.displayName) is paused: \($0.reason)",
                    wait: max(.seconds(1), $0.probeAt - now)
                )
            }
        }
    }

    /// Counts a request's outcome; returns the failures and the total when they make an outage of a source that
    /// is not paused yet.
    @discardableResult
    private func record(_ index: Int, failed: Bool, at now: ContinuousClock.Instant) -> (Int, Int)? {
        let configuration = self.configuration
        return self.state.withLock { state in
            Self.inPlace(&state.limits[index]) { limit in
                limit.outcomes.append((now, failed))
                while let first = limit.outcomes.first, now - first.at > configuration.outageWindow {
                    limit.outcomes.removeFirst()
                }
                limit.consecutiveFailures = failed ? limit.consecutiveFailures + 1 : 0
                guard failed, limit.circuit == nil else { return nil }
                if limit.consecutiveFailures >= configuration.outageConsecutiveFailures {
                    return (limit.consecutiveFailures, limit.consecutiveFailures)
                }
                let failures = limit.outcomes.count(where: \.failed)
                let total = limit.outcomes.count
                guard failures >= configuration.outageMinimumFailures,
                    Double(failures) >= configuration.outageFailureRatio * Double(total)
                else { return nil }
                return (failures, total)
            }
        }
    }

    /// Runs `body` on a limit where it lies. A copy taken out of the array (`var limit = state.limits[index]`)
    /// shares its queues' storage with the array, so the first change to a queue would copy all of it: the
    /// outcomes of the last ``SourceLimitsConfiguration/outageWindow``, thousands a second, on every request.
    private static func inPlace<T>(_ limit: inout Limit, _ body: (inout Limit) -> T) -> T {
        body(&limit)
    }

    private func openCircuit(_ index: Int, reason: String) async {
        let limit = self.configuration.limits[index]
        let now = ContinuousClock.now
        let opened = self.state.withLock { state -> Bool in
            guard state.limits[index].circuit == nil else { return false }
            state.limits[index].circuit = Circuit(
                reason: reason,
                probeAt: now + self.configuration.probeInterval,
                shared: false
            )
            return true
        }
        guard opened else { return }
        self.onEvent?(.paused(source: limit.source, true))
        self.logger.warning(
            "\(limit.displayName) paused for the pipeline; its jobs wait, a probe tries it in \(self.configuration.probeInterval)",
            metadata: ["marquee.source": "\(limit.source)", "marquee.error": "\(reason)"]
        )
        guard self.storeUsable(now) else { return }
        do {
            let member = self.configuration.member
            let probeAfter = self.configuration.probeInterval
            let circuit = try await answer(within: self.configuration.storeTimeout) {
                try await self.coordination.openCircuit(
                    limit.shared,
                    reason: reason,
                    member: member,
                    probeAfter: probeAfter
                )
            }
            let at = ContinuousClock.now
            self.state.withLock { state in
                // The store's clock as the last answers showed it; this host's wall clock before the first.
                let probeAt =
                    state.storeClock.local(circuit.probeAt) ?? at
                    + .microseconds(circuit.probeAt - wallClockMicroseconds())
                state.limits[index].circuit = Circuit(reason: circuit.reason, probeAt: probeAt, shared: true)
            }
            self.storeAnswered()
        } catch {
            self.storeFailed(error)
        }
    }

    /// A probe succeeded: the source runs again, here at once and in the other workers at their next heartbeat.
    private func resume(_ index: Int) async {
        let limit = self.configuration.limits[index]
        let wasPaused = self.state.withLock { state -> Bool in
            defer {
                state.limits[index].circuit = nil
                state.limits[index].outcomes.removeAll()
                state.limits[index].consecutiveFailures = 0
            }
            return state.limits[index].circuit != nil
        }
        if wasPaused {
            self.onEvent?(.paused(source: limit.source, false))
            self.logger.notice(
                "\(limit.displayName) is back: resumed for the pipeline",
                metadata: ["marquee.source": "\(limit.source)"]
            )
        }
        guard self.storeUsable(.now) else { return }
        do {
            try await answer(within: self.configuration.storeTimeout) {
                try await self.coordination.closeCircuit(limit.id)
            }
            self.storeAnswered()
        } catch {
            self.storeFailed(error)
        }
    }

    private func throttled(_ index: Int, retryAfter: Duration?) async {
        let limit = self.configuration.limits[index]
        let now = ContinuousClock.now
        let until = now + (retryAfter ?? .seconds(1))
        self.state.withLock { state in
            state.limits[index].throttled += 1
            state.limits[index].recentThrottles.append(now)
            Self.block(&state.limits[index], until: until)
            state.limits[index].factor = Store.slowedFactor(state.limits[index].factor)
        }
        self.signals[index].reserveInput.yield()
        self.onEvent?(.throttled(source: limit.source))
        self.logger.notice(
            "\(limit.displayName) answered 429: every worker slows down",
            metadata: [
                "marquee.source": "\(limit.source)", "marquee.retry_after": "\(retryAfter.map { "\($0)" } ?? "none")",
            ]
        )
        guard limit.rate != nil, self.storeUsable(now) else { return }
        do {
            _ = try await answer(within: self.configuration.storeTimeout) {
                try await self.coordination.throttle(limit.shared, retryAfter: retryAfter ?? .seconds(1))
            }
            self.storeAnswered()
        } catch {
            self.storeFailed(error)
        }
    }

    /// No slot of `limit` starts before `until`: the slots held before it are dropped (the caller then signals the
    /// reserver, which takes new ones for the requests that lost theirs). A slot up to a millisecond early is kept:
    /// it is the block's own end, seen through another clock mapping.
    private static func block(_ limit: inout Limit, until: ContinuousClock.Instant) {
        if let current = limit.blockedUntil, current >= until { return }
        limit.blockedUntil = until
        while let first = limit.slots.first, first < until - .milliseconds(1) { limit.slots.removeFirst() }
        limit.localNext = max(limit.localNext, until)
    }

    // MARK: - Budgets

    private func takeBudget(_ index: Int, budget: Int) async throws {
        let limit = self.configuration.limits[index]
        let (day, resetAt) = limit.budgetDay(at: wallClockMicroseconds())
        let untilReset = Duration.microseconds(max(1_000_000, resetAt - wallClockMicroseconds()))
        var granted: Bool?
        var spent = 0
        if self.storeUsable(.now) {
            do {
                let answer = try await answer(within: self.configuration.storeTimeout) {
                    try await self.coordination.takeBudget(limit.id, day: day, budget: budget, resetAt: resetAt)
                }
                self.storeAnswered()
                granted = answer.granted
                spent = answer.spent
                self.state.withLock { $0.limits[index].storeBudget = (day, answer.spent) }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                self.storeFailed(error)
            }
        }
        if granted == nil {
            // Alone: this worker's share of what the store last said was left of the day's budget (divided by the
            // members it knew of), so the workers together stay within it.
            (granted, spent) = self.state.withLock { state in
                let members = max(1, state.members)
                return Self.inPlace(&state.limits[index]) { limit in
                    if limit.localBudget.day != day { limit.localBudget = (day, 0) }
                    let spentBefore = limit.storeBudget.day == day ? limit.storeBudget.spent : 0
                    let share = max(0, budget - spentBefore) / members
                    guard limit.localBudget.spent < share else { return (false, budget) }
                    limit.localBudget.spent += 1
                    return (true, spentBefore + limit.localBudget.spent)
                }
            }
        }
        self.onEvent?(.budgetRemaining(source: limit.source, max(0, budget - spent)))
        guard granted == true else {
            throw SourceHeld(
                source: limit.source,
                reason:
                    "the \(limit.displayName) key's daily budget of \(budget) calls is spent (it resets at midnight, UTC\(Self.offsetText(limit.budgetUTCOffset)))",
                wait: untilReset
            )
        }
    }

    private static func offsetText(_ offset: Duration) -> String {
        let hours = offset.components.seconds / 3600
        return hours >= 0 ? "+\(hours)" : "\(hours)"
    }

    // MARK: - The schedule

    /// Waits for the next slot of `index`; `false` when cancelled or closed.
    private func waitForSlot(_ index: Int) async -> Bool {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let cancelled = Atomic<Bool>(false)
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let accepted = self.state.withLock { state -> Bool in
                    guard !state.isClosed, !cancelled.load(ordering: .acquiring) else { return false }
                    state.limits[index].waiters.append(Waiter(id: id, continuation: continuation, since: .now))
                    return true
                }
                if accepted {
                    self.signals[index].reserveInput.yield()
                } else {
                    continuation.resume(returning: false)
                }
            }
        } onCancel: {
            cancelled.store(true, ordering: .releasing)
            let waiter = self.state.withLock { state -> Waiter? in
                guard let position = state.limits[index].waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.limits[index].waiters.remove(at: position)
            }
            waiter?.continuation.resume(returning: false)
        }
        return granted
    }

    private enum Plan {
        case idle
        case wait(ContinuousClock.Instant)
        case reserve(Int)
    }

    /// Runs the heartbeat and every limit's schedule until the calling task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.heartbeats() }
            for (index, limit) in self.configuration.limits.enumerated() where limit.rate != nil {
                group.addTask { await self.reserving(index) }
                group.addTask { await self.dispatching(index) }
            }
        }
    }

    /// Ends every wait (the waiting requests see `CancellationError`) and leaves the members, so the other workers
    /// count without this one at once.
    public func close() async {
        let waiters = self.state.withLock { state -> [Waiter] in
            state.isClosed = true
            var waiters: [Waiter] = []
            for index in state.limits.indices {
                waiters.append(contentsOf: state.limits[index].waiters)
                state.limits[index].waiters.removeAll()
            }
            return waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        self.started.fire()
        for signal in self.signals {
            signal.reserveInput.finish()
            signal.dispatchInput.finish()
        }
        guard self.storeUsable(.now) else { return }
        let member = self.configuration.member
        _ = try? await answer(within: self.configuration.storeTimeout) {
            try await self.coordination.leave(member: member)
        }
    }

    /// Keeps slots reserved for the requests waiting, up to the lookahead.
    private func reserving(_ index: Int) async {
        let limit = self.configuration.limits[index]
        guard let rate = limit.rate else { return }
        let batch = max(1, Int((rate * self.configuration.batch.seconds).rounded(.up)))
        var signal = self.signals[index].reserve.makeAsyncIterator()
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let plan = self.state.withLock { state -> Plan in
                let limit = state.limits[index]
                let need = limit.waiters.count - limit.slots.count
                guard need > 0 else { return .idle }
                if let last = limit.slots.last, last > now + self.configuration.lookahead {
                    return .wait(last - self.configuration.lookahead)
                }
                return .reserve(min(need, batch))
            }
            switch plan {
            case .idle:
                guard await signal.next() != nil else { return }
            case .wait(let until):
                do { try await Task.sleep(until: until) } catch { return }
            case .reserve(let count):
                await self.reserve(index, count: count, rate: rate)
            }
        }
    }

    private func reserve(_ index: Int, count: Int, rate: Double) async {
        let limit = self.configuration.limits[index]
        if self.storeUsable(.now) {
            do {
                let member = self.configuration.member
                let sent = ContinuousClock.now
                let reservation = try await answer(within: self.configuration.storeTimeout) {
                    try await self.coordination.reserve(limit.shared, count: count, member: member)
                }
                let received = ContinuousClock.now
                self.state.withLock { state in
                    state.storeClock.observe(storeNow: reservation.now, sent: sent, received: received)
                    let start = state.storeClock.local(reservation.start) ?? received
                    let slots = (0..<count).map {
                        start + .microseconds(Int64((Double($0) * reservation.interval).rounded()))
                    }
                    state.limits[index].factor = reservation.factor
                    Self.add(slots, to: &state.limits[index])
                }
                self.storeAnswered()
                self.signals[index].dispatchInput.yield()
                return
            } catch is CancellationError {
                return
            } catch {
                self.storeFailed(error)
            }
        }
        // Alone: the limit divided by the members this worker last knew of, never the whole limit shared by several.
        self.state.withLock { state in
            let share = rate * SourceLimit.pace * state.limits[index].factor / Double(max(1, state.members))
            let interval = Duration.seconds(1 / share)
            var next = max(state.limits[index].localNext, .now, state.limits[index].blockedUntil ?? .now)
            if let last = state.limits[index].slots.last { next = max(next, last + interval) }
            var slots: [ContinuousClock.Instant] = []
            for _ in 0..<count {
                slots.append(next)
                next += interval
            }
            state.limits[index].localNext = next
            Self.add(slots, to: &state.limits[index])
        }
        self.signals[index].dispatchInput.yield()
    }

    private static func add(_ slots: [ContinuousClock.Instant], to limit: inout Limit) {
        let blocked = (limit.blockedUntil ?? .now) - .milliseconds(1)
        for slot in slots where slot >= blocked || limit.blockedUntil == nil {
            if let last = limit.slots.last, slot < last {
                let position = limit.slots.firstIndex(where: { $0 > slot }) ?? limit.slots.endIndex
                limit.slots.insert(slot, at: position)
            } else {
                limit.slots.append(slot)
            }
        }
    }

    /// Starts the waiting requests at their slots.
    private func dispatching(_ index: Int) async {
        // How late a slot may still be granted: half an interval of the limit (at most 50 ms), so a late grant and
        // the next one on time are never closer than half the schedule's spacing.
        let staleness = min(.milliseconds(50), Duration.seconds(0.5 / (self.configuration.limits[index].rate ?? 1)))
        var signal = self.signals[index].dispatch.makeAsyncIterator()
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let (granted, next) = self.state.withLock { state -> ([Waiter], ContinuousClock.Instant?) in
                Self.inPlace(&state.limits[index]) { limit in
                    var granted: [Waiter] = []
                    while let slot = limit.slots.first, slot <= now {
                        limit.slots.removeFirst()
                        // A slot this loop woke too late for (a starved thread) is lost, not granted with the next
                        // ones: granting it late would put two requests where the schedule has one.
                        guard slot >= now - staleness else { continue }
                        guard let waiter = limit.waiters.popFirst() else { continue }  // nobody waits: the slot is lost
                        granted.append(waiter)
                        limit.requests += 1
                        limit.waited += now - waiter.since
                        limit.recentRequests.append(now)
                    }
                    return (granted, limit.slots.first)
                }
            }
            if let onGrant = self.onGrant { for _ in granted { onGrant(now) } }
            for waiter in granted { waiter.continuation.resume(returning: true) }
            self.signals[index].reserveInput.yield()  // slots used or lost: the waiters left may need new ones
            if let next {
                do { try await Task.sleep(until: next) } catch { return }
            } else {
                guard await signal.next() != nil else { return }
            }
        }
    }

    // MARK: - Heartbeats

    private func heartbeats() async {
        defer { self.started.fire() }
        while !Task.isCancelled, !self.state.withLock({ $0.isClosed }) {
            if self.storeUsable(.now) {
                do {
                    let usage = self.usage()
                    let configuration = self.configuration
                    let startedAt = self.startedAt
                    let timeout = self.started.isFired ? configuration.storeTimeout : configuration.startupTimeout
                    let sent = ContinuousClock.now
                    let view = try await answer(within: timeout) {
                        try await self.coordination.heartbeat(
                            member: configuration.member,
                            stage: configuration.stage,
                            host: configuration.host,
                            startedAt: startedAt,
                            usage: usage,
                            expiry: configuration.memberExpiry
                        )
                    }
                    self.storeAnswered()
                    // A heartbeat that was on its way while `close()` left the members wrote this worker back:
                    // leave again, so a closed worker is never counted.
                    if self.state.withLock({ $0.isClosed }) {
                        let member = configuration.member
                        _ = try? await answer(within: timeout) { try await self.coordination.leave(member: member) }
                        return
                    }
                    self.apply(view, sent: sent, received: .now)
                } catch is CancellationError {
                    return
                } catch {
                    self.storeFailed(error)
                }
            }
            self.started.fire()
            do { try await Task.sleep(for: self.configuration.heartbeatInterval) } catch { return }
        }
    }

    /// Each limit's figures for the store (``Store/LimitUsage``).
    private func usage() -> [Store.LimitUsage] {
        let now = ContinuousClock.now
        return self.state.withLock { state in
            self.configuration.limits.indices.map { index in
                let limit = Self.inPlace(&state.limits[index]) { limit in
                    while let first = limit.recentRequests.first, now - first > .seconds(10) {
                        limit.recentRequests.removeFirst()
                    }
                    while let first = limit.recentThrottles.first, now - first > .seconds(60) {
                        limit.recentThrottles.removeFirst()
                    }
                    return limit
                }
                let (seconds, attoseconds) = limit.waited.components
                return Store.LimitUsage(
                    limitID: self.configuration.limits[index].id,
                    requests: limit.requests,
                    throttled: limit.throttled,
                    waitedMicroseconds: seconds * 1_000_000 + attoseconds / 1_000_000_000_000,
                    recentRate: Double(limit.recentRequests.count) / 10,
                    recentThrottled: limit.recentThrottles.count
                )
            }
        }
    }

    /// Takes in what the other workers did: paused and resumed sources, `Retry-After` blocks, the member count.
    private func apply(_ view: Store.CoordinationView, sent: ContinuousClock.Instant, received: ContinuousClock.Instant)
    {
        var changes: [(String, String, String?)] = []
        self.state.withLock { state in
            state.storeClock.observe(storeNow: view.now, sent: sent, received: received)
            let clock = state.storeClock
            func local(_ storeTime: Int64) -> ContinuousClock.Instant { clock.local(storeTime) ?? received }
            state.members = max(1, view.members)
            for (index, limit) in self.configuration.limits.enumerated() {
                let circuit = view.circuits.first { $0.limitID == limit.id }
                let current = state.limits[index].circuit
                if let circuit {
                    // A probe time this worker moved on (its own claim) stays; the store's is taken otherwise.
                    let probeAt = max(local(circuit.probeAt), current?.probeAt ?? local(circuit.probeAt))
                    if current == nil { changes.append((limit.source, limit.displayName, circuit.reason)) }
                    state.limits[index].circuit = Circuit(reason: circuit.reason, probeAt: probeAt, shared: true)
                } else if current?.shared == true {
                    state.limits[index].circuit = nil
                    state.limits[index].outcomes.removeAll()
                    state.limits[index].consecutiveFailures = 0
                    changes.append((limit.source, limit.displayName, nil))
                }
                if let entry = view.limits[limit.id] {
                    if entry.blockedUntil > view.now {
                        Self.block(&state.limits[index], until: local(entry.blockedUntil))
                    }
                    state.limits[index].factor = entry.factor
                }
            }
        }
        for signal in self.signals { signal.reserveInput.yield() }
        for (source, name, reason) in changes {
            self.onEvent?(.paused(source: source, reason != nil))
            if let reason {
                self.logger.warning(
                    "\(name) paused by another worker",
                    metadata: ["marquee.source": "\(source)", "marquee.error": "\(reason)"]
                )
            } else {
                self.logger.notice("\(name) resumed by another worker", metadata: ["marquee.source": "\(source)"])
            }
        }
    }

    // MARK: - The store's health

    private func storeUsable(_ now: ContinuousClock.Instant) -> Bool {
        self.state.withLock { state in
            guard let until = state.storeFailingUntil else { return true }
            return now >= until
        }
    }

    private func storeAnswered() {
        let recovered = self.state.withLock { state -> Bool in
            defer {
                state.storeFailingUntil = nil
                state.storeWarned = false
            }
            return state.storeWarned
        }
        if recovered { self.logger.notice("the shared limits' store answers again: limits are the pipeline's again") }
    }

    private func storeFailed(_ error: any Error) {
        let (warn, members) = self.state.withLock { state -> (Bool, Int) in
            state.storeFailingUntil = .now + self.configuration.storeRetryInterval
            defer { state.storeWarned = true }
            return (!state.storeWarned, state.members)
        }
        if warn {
            self.logger.warning(
                "the shared limits' store does not answer: this worker paces alone at 1/\(members) of each limit until it does",
                metadata: ["marquee.error": "\(error)"]
            )
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = self.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
