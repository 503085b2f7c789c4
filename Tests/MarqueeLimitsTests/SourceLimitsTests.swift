import Foundation
import Logging
import MarqueeStore
import MarqueeTestSupport
import Synchronization
import Testing

@testable import MarqueeLimits

/// Several workers' ``SourceLimits`` on one ``Coordination`` (memory, or an SQLite store as separate processes on
/// one machine share it): the pace, the blocks, the budgets and the pauses are the pipeline's.
@Suite(.timeLimit(.minutes(2)))
struct SourceLimitsTests {
    static let logger = Logger(label: "marquee.limits.test")

    static func configuration(
        rate: Double? = nil,
        budget: Int? = nil,
        member: String,
        tune: (inout SourceLimitsConfiguration) -> Void = { _ in }
    ) -> SourceLimitsConfiguration {
        var configuration = SourceLimitsConfiguration(
            limits: [
                SourceLimit(
                    source: "tmdb",
                    displayName: "TMDB",
                    key: "k1",
                    host: "127.0.0.1:1",
                    rate: rate,
                    dailyBudget: budget
                )
            ],
            stage: "fetch",
            member: member,
            host: "test"
        )
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.probeInterval = .milliseconds(300)
        configuration.probeIntervalMaximum = .milliseconds(300)
        tune(&configuration)
        return configuration
    }

    /// Runs `workers` limits on `coordination` while `body` runs; `grants` receives the instant of every request
    /// start the schedules granted (what reaches the HTTP client, before the waiting tasks are resumed).
    static func withWorkers<T: Sendable>(
        _ count: Int,
        coordination: any Coordination,
        rate: Double? = nil,
        budget: Int? = nil,
        grants: Grants? = nil,
        tune: @escaping (inout SourceLimitsConfiguration) -> Void = { _ in },
        _ body: ([SourceLimits]) async throws -> T
    ) async throws -> T {
        var onGrant: (@Sendable (ContinuousClock.Instant) -> Void)?
        if let grants { onGrant = { instant in grants.record(instant) } }
        var workers: [SourceLimits] = []
        for index in 0..<count {
            workers.append(
                SourceLimits(
                    configuration: Self.configuration(
                        rate: rate,
                        budget: budget,
                        member: "fetch/test/\(index)",
                        tune: tune
                    ),
                    coordination: coordination,
                    logger: Self.logger,
                    onEvent: nil,
                    onGrant: onGrant
                )
            )
        }
        let runs = workers.map { worker in Task { await worker.run() } }
        defer {
            for run in runs { run.cancel() }
        }
        let result = try await body(workers)
        for worker in workers { await worker.close() }
        return result
    }

    /// The most admissions within any one second.
    static func busiestSecond(_ times: [ContinuousClock.Instant]) -> Int {
        let sorted = times.sorted()
        var best = 0
        var first = 0
        for last in sorted.indices {
            while sorted[last] - sorted[first] >= .seconds(1) { first += 1 }
            best = max(best, last - first + 1)
        }
        return best
    }

    /// Admits `count` requests spread over `workers`, each worker with many waiting at once.
    static func admit(_ count: Int, over workers: [SourceLimits]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                let worker = workers[index % workers.count]
                group.addTask { _ = try await worker.admit("tmdb") }
            }
            try await group.waitForAll()
        }
    }

    /// Whether a paused source refused a request: held, or admitted only as its one probe (never as a normal
    /// request).
    static func refusesNormalRequests(_ worker: SourceLimits) async throws -> Bool {
        do {
            return try await worker.admit("tmdb").isProbe
        } catch is SourceHeld {
            return true
        }
    }

    /// Store deadlines no loaded machine reaches: for the tests of the shared path (a test run starves a test of
    /// its threads for many seconds at times).
    static func bePatient(_ configuration: inout SourceLimitsConfiguration) {
        configuration.storeTimeout = .seconds(60)
        configuration.startupTimeout = .seconds(60)
    }

    static func sqliteStore() throws -> (Store, String) {
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-limits")).db"
        return (try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: Self.logger), path)
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func threeWorkersOnOneScheduleHoldTheLimitTogether() async throws {
        let grants = Grants()
        try await Self.withWorkers(3, coordination: LocalCoordination(), rate: 40, grants: grants) { workers in
            try await Self.admit(120, over: workers)
        }
        let times = grants.times
        #expect(times.count == 120)
        // Three workers at a limit of 40 a second: 40 in any one second (41 with the second's edges), not 120.
        #expect(Self.busiestSecond(times) <= 41, "the busiest second held \(Self.busiestSecond(times))")
        let span = times.max()! - times.min()!
        #expect(span >= .seconds(2.9), "120 requests at 40 a second take about 3 s, not \(span)")
    }

    @Test func workersSharingAnSQLiteStoreHoldTheLimitTogether() async throws {
        let (store, path) = try Self.sqliteStore()
        defer { Self.remove(path) }
        let grants = Grants()
        // Generous store deadlines: the shared path is under test, not the fallback of a store too slow to answer.
        let patient: (inout SourceLimitsConfiguration) -> Void = { Self.bePatient(&$0) }
        try await Self.withWorkers(
            3,
            coordination: StoreCoordination(store: store),
            rate: 40,
            grants: grants,
            tune: patient
        ) { workers in
            try await Self.admit(120, over: workers)
        }
        await store.close()
        let times = grants.times
        #expect(Self.busiestSecond(times) <= 41, "the busiest second held \(Self.busiestSecond(times))")
        #expect(times.max()! - times.min()! >= .seconds(2.9))
        let snapshotStore = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: Self.logger)
        let snapshot = try await snapshotStore.coordinationSnapshot()
        await snapshotStore.close()
        #expect(snapshot.limits.map(\.id) == ["tmdb:\(SourceLimit.fingerprint(ofKey: "k1"))@127.0.0.1:1"])
        #expect(snapshot.members.isEmpty, "closed workers leave the members")
    }

    @Test func aHeartbeatOnItsWayWhileTheWorkerClosesDoesNotLeaveItAMember() async throws {
        let coordination = GatedCoordination()
        let worker = SourceLimits(
            // A store deadline the held heartbeat never reaches: one that timed out would be abandoned, and its late
            // write is left to the member expiry (the session timeout), not to this rule.
            configuration: Self.configuration(rate: 40, member: "fetch/test/0", tune: { Self.bePatient(&$0) }),
            coordination: coordination,
            logger: Self.logger,
            onEvent: nil,
            onGrant: nil
        )
        let run = Task { await worker.run() }
        defer { run.cancel() }
        // Generous waits: a loaded machine starves the heartbeat loop for seconds at times.
        try await waitUntil(timeout: .seconds(60)) { coordination.members == ["fetch/test/0"] }
        // The next heartbeat reaches the store only after close() has left the members.
        coordination.holdNextHeartbeat()
        try await waitUntil(timeout: .seconds(60)) { coordination.isHoldingAHeartbeat }
        await worker.close()
        #expect(coordination.members.isEmpty)
        coordination.release()
        try await waitUntil(timeout: .seconds(60)) {
            coordination.heartbeatsAnswered > 0 && coordination.members.isEmpty
        }
    }

    @Test func withoutTheStoreAWorkerPacesAtItsShareOfTheMembersItKnew() async throws {
        let coordination = FailingCoordination(members: 4)
        let grants = Grants()
        try await Self.withWorkers(1, coordination: coordination, rate: 40, grants: grants) { workers in
            // The first heartbeat tells of four members; then the store fails.
            try await waitUntil { workers[0].knownMembers == 4 }
            coordination.failing.store(true, ordering: .relaxed)
            try await Self.admit(20, over: workers)
        }
        let times = grants.times
        // A quarter of 40 a second: 20 requests take about 2 s, and no second holds more than 11.
        #expect(Self.busiestSecond(times) <= 11, "the busiest second held \(Self.busiestSecond(times))")
        #expect(times.max()! - times.min()! >= .seconds(1.85))
    }

    /// A worker cut off from the store (and, on the same network, from the upstream) pauses the source on its own.
    /// The store never heard of that pause: once it answers again, the worker probes the source itself instead of
    /// waiting for a probe the store has no pause to grant (which held the worker's jobs for good).
    @Test func aPauseOpenedWithoutTheStoreIsProbedOnceTheStoreAnswers() async throws {
        let coordination = FailingCoordination(members: 1)
        try await Self.withWorkers(1, coordination: coordination) { workers in
            try await waitUntil { coordination.heartbeats.load(ordering: .relaxed) > 0 }
            coordination.failing.store(true, ordering: .relaxed)
            for _ in 0..<5 {
                let ticket = try await workers[0].admit("tmdb")
                await workers[0].report(ticket, .failed("timeout"))
            }
            #expect(workers[0].pause(of: "tmdb") != nil)
            coordination.failing.store(false, ordering: .relaxed)
            let answered = coordination.heartbeats.load(ordering: .relaxed)
            try await waitUntil { coordination.heartbeats.load(ordering: .relaxed) > answered + 1 }
            var probe: SourceTicket?
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while probe == nil, clock.now < deadline {
                if let ticket = try? await workers[0].admit("tmdb"), ticket.isProbe {
                    probe = ticket
                } else {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let ticket = try #require(probe, "the worker probes its own pause once the store answers")
            await workers[0].report(ticket, .answered)
            #expect(workers[0].pause(of: "tmdb") == nil)
            _ = try await workers[0].admit("tmdb")
        }
    }

    @Test func aRefusedKeySeenByOneWorkerPausesTheSourceInEveryWorkerUntilAProbeSucceeds() async throws {
        let coordination = LocalCoordination()
        try await Self.withWorkers(3, coordination: coordination) { workers in
            let ticket = try await workers[0].admit("tmdb")
            let held = await workers[0].report(ticket, .refused("Invalid API key"))
            #expect(held?.reason.contains("Invalid API key") == true)
            // The others learn it from their heartbeat.
            try await waitUntil { workers.allSatisfy { $0.pause(of: "tmdb") != nil } }
            #expect(try await Self.refusesNormalRequests(workers[1]))
            // After the probe interval, one of them probes; the probe's success resumes the source everywhere.
            var probe: SourceTicket?
            while probe == nil {
                for worker in workers {
                    if let ticket = try? await worker.admit("tmdb"), ticket.isProbe {
                        probe = ticket
                        await worker.report(ticket, .answered)
                        break
                    }
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await waitUntil { workers.allSatisfy { $0.pause(of: "tmdb") == nil } }
            _ = try await workers[2].admit("tmdb")
        }
    }

    @Test func anOutagePausesTheSourceAfterEnoughFailures() async throws {
        try await Self.withWorkers(1, coordination: LocalCoordination()) { workers in
            var held: SourceHeld?
            // Four failures and an answer, over and over: never five in a row, but the tenth failure of twelve
            // requests within the window makes an outage.
            for index in 0..<12 {
                #expect(held == nil)
                let ticket = try await workers[0].admit("tmdb")
                held = await workers[0].report(ticket, index % 5 == 4 ? .answered : .failed("HTTP 503"))
            }
            #expect(held != nil, "ten failures of twelve within the window are an outage")
            #expect(held?.reason.contains("10 of its last 12 requests failed") == true, "\(String(describing: held))")
            #expect(try await Self.refusesNormalRequests(workers[0]))
        }
    }

    @Test func fiveFailuresInARowAreAnOutageHoweverSlowlyTheyCame() async throws {
        try await Self.withWorkers(1, coordination: LocalCoordination()) { workers in
            var held: SourceHeld?
            for _ in 0..<5 {
                #expect(held == nil)
                let ticket = try await workers[0].admit("tmdb")
                held = await workers[0].report(ticket, .failed("HTTP 503"))
            }
            #expect(held?.reason.contains("its last 5 requests failed") == true, "\(String(describing: held))")
        }
    }

    @Test func aFewFailuresAmongAnswersAreNoOutage() async throws {
        try await Self.withWorkers(1, coordination: LocalCoordination()) { workers in
            for index in 0..<40 {
                let ticket = try await workers[0].admit("tmdb")
                let held = await workers[0].report(ticket, index % 4 == 0 ? .failed("HTTP 503") : .answered)
                #expect(held == nil)
            }
        }
    }

    @Test func theDailyBudgetIsCountedOnceForEveryWorkerAndKeptAcrossRestarts() async throws {
        let (store, path) = try Self.sqliteStore()
        defer { Self.remove(path) }
        let coordination = StoreCoordination(store: store)
        // Generous store deadlines: the shared count is under test, not the fallback of a store too slow to answer.
        let patient: (inout SourceLimitsConfiguration) -> Void = { Self.bePatient(&$0) }
        let granted = try await Self.withWorkers(2, coordination: coordination, budget: 5, tune: patient) { workers in
            var granted = 0
            for index in 0..<8 {
                do {
                    _ = try await workers[index % 2].admit("tmdb")
                    granted += 1
                } catch let held as SourceHeld {
                    #expect(held.reason.contains("daily budget of 5 calls is spent"))
                    #expect(held.wait > .zero && held.wait <= .seconds(86_400))
                }
            }
            return granted
        }
        #expect(granted == 5)
        // A restarted worker (a new process on the same store) finds the budget spent.
        _ = try await Self.withWorkers(1, coordination: StoreCoordination(store: store), budget: 5, tune: patient) {
            workers in
            await #expect(throws: SourceHeld.self) { try await workers[0].admit("tmdb") }
        }
        await store.close()
    }

    @Test func aThrottleBlocksEveryWorkersSchedule() async throws {
        let coordination = LocalCoordination()
        try await Self.withWorkers(2, coordination: coordination, rate: 100) { workers in
            let ticket = try await workers[0].admit("tmdb")
            let answered = ContinuousClock.now
            await workers[0].report(ticket, .throttled(retryAfter: .seconds(1)))
            _ = try await workers[1].admit("tmdb")
            #expect(
                ContinuousClock.now - answered >= .milliseconds(990),
                "the other worker waits out the Retry-After too"
            )
        }
    }

    @Test func theBudgetDayIsKoreasCalendarDay() {
        let limit = SourceLimit(
            source: "kofic",
            displayName: "KOFIC",
            key: nil,
            host: "h:80",
            rate: nil,
            dailyBudget: 3
        )
        // 2024-01-01 14:59:00 UTC is 23:59 in Korea; a minute later it is 2 January there.
        let before: Int64 = 1_704_121_140_000_000
        #expect(limit.budgetDay(at: before).day == "2024-01-01")
        #expect(limit.budgetDay(at: before).resetAt == before + 60_000_000)
        #expect(limit.budgetDay(at: before + 60_000_000).day == "2024-01-02")
    }

    @Test func limitsAreNamedBySourceKeyFingerprintAndUpstream() {
        #expect(SourceLimit.hostAndPort(ofURL: "https://api.themoviedb.org/3") == "api.themoviedb.org:443")
        #expect(SourceLimit.hostAndPort(ofURL: "http://127.0.0.1:8181/tmdb/3") == "127.0.0.1:8181")
        #expect(SourceLimit.hostAndPort(ofURL: "http://[::1]:81/x") == "[::1]:81")
        let fingerprint = SourceLimit.fingerprint(ofKey: "secret-key")
        #expect(fingerprint.hasPrefix("key-") && fingerprint.count == 12)
        #expect(!fingerprint.contains("secret"))
        #expect(SourceLimit.fingerprint(ofKey: nil) == "anonymous")
    }
}

/// The instants a test's schedules granted.
final class Grants: Sendable {
    private let instants = Mutex<[ContinuousClock.Instant]>([])

    func record(_ instant: ContinuousClock.Instant) { self.instants.withLock { $0.append(instant) } }

    var times: [ContinuousClock.Instant] { self.instants.withLock { $0 } }
}

/// A coordination that answers like memory until told to fail, with a member count of its own.
final class FailingCoordination: Coordination {
    let failing = Atomic<Bool>(false)
    /// Heartbeats answered (not failed).
    let heartbeats = Atomic<Int>(0)
    private let local = LocalCoordination()
    private let members: Int

    init(members: Int) { self.members = members }

    struct Down: Error {}

    private func check() throws { if self.failing.load(ordering: .relaxed) { throw Down() } }

    func reserve(_ limit: Store.SharedLimit, count: Int, member: String) async throws -> Store.Reservation {
        try self.check()
        return try await self.local.reserve(limit, count: count, member: member)
    }

    func throttle(_ limit: Store.SharedLimit, retryAfter: Duration?) async throws -> (blockedUntil: Int64, now: Int64) {
        try self.check()
        return try await self.local.throttle(limit, retryAfter: retryAfter)
    }

    func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [Store.LimitUsage],
        expiry: Duration
    ) async throws -> Store.CoordinationView {
        try self.check()
        var view = try await self.local.heartbeat(
            member: member,
            stage: stage,
            host: host,
            startedAt: startedAt,
            usage: usage,
            expiry: expiry
        )
        view.members = self.members
        self.heartbeats.add(1, ordering: .relaxed)
        return view
    }

    func leave(member: String) async throws { try self.check() }

    func openCircuit(
        _ limit: Store.SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Store.Circuit {
        try self.check()
        return try await self.local.openCircuit(limit, reason: reason, member: member, probeAfter: probeAfter)
    }

    func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool {
        try self.check()
        return try await self.local.claimProbe(limitID, backoff: backoff)
    }

    func closeCircuit(_ limitID: String) async throws {
        try self.check()
        try await self.local.closeCircuit(limitID)
    }

    func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> Store.BudgetState {
        try self.check()
        return try await self.local.takeBudget(key, day: day, budget: budget, resetAt: resetAt)
    }

    func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws {
        try self.check()
        try await self.local.exhaustBudget(key, day: day, budget: budget, resetAt: resetAt)
    }
}

/// A coordination that keeps its members like the store does (a heartbeat writes its member, leaving removes
/// it) and can hold one heartbeat back until released, to land it after the worker has left.
final class GatedCoordination: Coordination {
    private let local = LocalCoordination()
    private let state = Mutex(State())
    private let gate = AsyncStream.makeStream(of: Void.self)

    private struct State {
        var members: Set<String> = []
        var holdNext = false
        var holding = false
        var answered = 0
    }

    var members: Set<String> { self.state.withLock { $0.members } }
    var isHoldingAHeartbeat: Bool { self.state.withLock { $0.holding } }
    var heartbeatsAnswered: Int { self.state.withLock { $0.answered } }

    func holdNextHeartbeat() { self.state.withLock { $0.holdNext = true } }
    func release() { self.gate.continuation.finish() }

    func reserve(_ limit: Store.SharedLimit, count: Int, member: String) async throws -> Store.Reservation {
        try await self.local.reserve(limit, count: count, member: member)
    }

    func throttle(_ limit: Store.SharedLimit, retryAfter: Duration?) async throws -> (blockedUntil: Int64, now: Int64) {
        try await self.local.throttle(limit, retryAfter: retryAfter)
    }

    func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [Store.LimitUsage],
        expiry: Duration
    ) async throws -> Store.CoordinationView {
        let held = self.state.withLock { state in
            defer { state.holdNext = false }
            state.holding = state.holdNext
            return state.holdNext
        }
        if held {
            for await _ in self.gate.stream {}
        }
        let view = try await self.local.heartbeat(
            member: member,
            stage: stage,
            host: host,
            startedAt: startedAt,
            usage: usage,
            expiry: expiry
        )
        self.state.withLock { state in
            state.members.insert(member)
            if held { state.answered += 1 }
        }
        return view
    }

    func leave(member: String) async throws {
        _ = self.state.withLock { $0.members.remove(member) }
    }

    func openCircuit(
        _ limit: Store.SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Store.Circuit {
        try await self.local.openCircuit(limit, reason: reason, member: member, probeAfter: probeAfter)
    }

    func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool {
        try await self.local.claimProbe(limitID, backoff: backoff)
    }

    func closeCircuit(_ limitID: String) async throws {
        try await self.local.closeCircuit(limitID)
    }

    func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> Store.BudgetState {
        try await self.local.takeBudget(key, day: day, budget: budget, resetAt: resetAt)
    }

    func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws {
        try await self.local.exhaustBudget(key, day: day, budget: budget, resetAt: resetAt)
    }
}

/// Polls `condition` every 20 ms until it holds; fails after `timeout`.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition did not hold within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
