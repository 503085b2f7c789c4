public import MarqueeStore
import Synchronization

/// Where the workers of a pipeline share their limits: the store (``StoreCoordination``), or this process's
/// memory (``LocalCoordination``: one worker alone, and tests).
///
/// Every time is in microseconds on the backend's clock, and every answer carries that clock's `now`, so a
/// worker maps a time onto its own monotonic clock by the difference.
public protocol Coordination: Sendable {
    func reserve(_ limit: Store.SharedLimit, count: Int, member: String) async throws -> Store.Reservation
    @discardableResult
    func throttle(_ limit: Store.SharedLimit, retryAfter: Duration?) async throws -> (blockedUntil: Int64, now: Int64)
    func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [Store.LimitUsage],
        expiry: Duration
    ) async throws -> Store.CoordinationView
    func leave(member: String) async throws
    func openCircuit(
        _ limit: Store.SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Store.Circuit
    func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool
    func closeCircuit(_ limitID: String) async throws
    func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> Store.BudgetState
    func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws
}

/// The limits shared through the store: every worker on the same store holds them together.
///
/// The schema is migrated on first use (safe from several processes at once).
public final class StoreCoordination: Coordination {
    private let store: Store
    private let migrated = Mutex(false)

    public init(store: Store) {
        self.store = store
    }

    private func ready() async throws -> Store {
        if self.migrated.withLock({ $0 }) { return self.store }
        _ = try await self.store.migrate()
        self.migrated.withLock { $0 = true }
        return self.store
    }

    public func reserve(_ limit: Store.SharedLimit, count: Int, member: String) async throws -> Store.Reservation {
        try await self.ready().reserve(limit, count: count, member: member)
    }

    public func throttle(
        _ limit: Store.SharedLimit,
        retryAfter: Duration?
    ) async throws -> (blockedUntil: Int64, now: Int64) {
        try await self.ready().throttle(limit, retryAfter: retryAfter)
    }

    public func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [Store.LimitUsage],
        expiry: Duration
    ) async throws -> Store.CoordinationView {
        try await self.ready().heartbeat(
            member: member,
            stage: stage,
            host: host,
            startedAt: startedAt,
            usage: usage,
            expiry: expiry
        )
    }

    public func leave(member: String) async throws {
        try await self.ready().leave(member: member)
    }

    public func openCircuit(
        _ limit: Store.SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Store.Circuit {
        try await self.ready().openCircuit(limit, reason: reason, member: member, probeAfter: probeAfter)
    }

    public func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool {
        try await self.ready().claimProbe(limitID, backoff: backoff)
    }

    public func closeCircuit(_ limitID: String) async throws {
        try await self.ready().closeCircuit(limitID)
    }

    public func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> Store.BudgetState {
        try await self.ready().takeBudget(key, day: day, budget: budget, resetAt: resetAt)
    }

    public func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws {
        try await self.ready().exhaustBudget(key, day: day, budget: budget, resetAt: resetAt)
    }
}

/// The same schedule, blocks, budgets and circuits in this process's memory: for one worker with no store to
/// share (and for tests). It never fails.
public final class LocalCoordination: Coordination {
    private struct Limit {
        var tat: Int64 = 0
        var blockedUntil: Int64 = 0
        var factor = 1.0
        var throttledAt: Int64 = 0
        var updatedAt: Int64 = 0
    }

    private struct State {
        var limits: [String: Limit] = [:]
        var circuits: [String: Store.Circuit] = [:]
        var budgets: [String: (day: String, spent: Int)] = [:]
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Int64

    /// - Parameter clock: Microseconds since the epoch (injected for tests).
    public init(clock: @escaping @Sendable () -> Int64 = { wallClockMicroseconds() }) {
        self.clock = clock
    }

    public func reserve(_ limit: Store.SharedLimit, count: Int, member: String) async throws -> Store.Reservation {
        let now = self.clock()
        return self.state.withLock { state in
            var entry = state.limits[limit.id] ?? Limit()
            let factor = Store.recoveredFactor(
                entry.factor,
                throttledAt: entry.throttledAt,
                updatedAt: entry.updatedAt,
                now: now
            )
            let interval = 1_000_000 / (limit.pace * factor)
            let start = max(entry.tat, now, entry.blockedUntil)
            entry.tat = start + Int64((Double(count) * interval).rounded())
            entry.factor = factor
            entry.updatedAt = now
            state.limits[limit.id] = entry
            return Store.Reservation(start: start, interval: interval, count: count, now: now, factor: factor)
        }
    }

    public func throttle(
        _ limit: Store.SharedLimit,
        retryAfter: Duration?
    ) async throws -> (blockedUntil: Int64, now: Int64) {
        let now = self.clock()
        return self.state.withLock { state in
            var entry = state.limits[limit.id] ?? Limit()
            let factor = Store.recoveredFactor(
                entry.factor,
                throttledAt: entry.throttledAt,
                updatedAt: entry.updatedAt,
                now: now
            )
            entry.factor = now - entry.throttledAt >= 1_000_000 ? Store.slowedFactor(factor) : factor
            entry.blockedUntil = max(entry.blockedUntil, now + (retryAfter.map(microseconds) ?? 0))
            entry.throttledAt = now
            entry.updatedAt = now
            state.limits[limit.id] = entry
            return (entry.blockedUntil, now)
        }
    }

    public func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [Store.LimitUsage],
        expiry: Duration
    ) async throws -> Store.CoordinationView {
        let now = self.clock()
        return self.state.withLock { state in
            Store.CoordinationView(
                members: 1,
                circuits: Array(state.circuits.values),
                limits: state.limits.mapValues {
                    (
                        $0.blockedUntil,
                        Store.recoveredFactor($0.factor, throttledAt: $0.throttledAt, updatedAt: $0.updatedAt, now: now)
                    )
                },
                now: now
            )
        }
    }

    public func leave(member: String) async throws {}

    public func openCircuit(
        _ limit: Store.SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Store.Circuit {
        let now = self.clock()
        return self.state.withLock { state in
            if let open = state.circuits[limit.id] { return open }
            let circuit = Store.Circuit(
                limitID: limit.id,
                source: limit.source,
                reason: reason,
                openedAt: now,
                openedBy: member,
                probeAt: now + microseconds(probeAfter),
                probes: 0
            )
            state.circuits[limit.id] = circuit
            return circuit
        }
    }

    public func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool {
        let now = self.clock()
        return self.state.withLock { state in
            guard var circuit = state.circuits[limitID], circuit.probeAt <= now else { return false }
            circuit.probes += 1
            circuit.probeAt = now + microseconds(backoff(circuit.probes))
            state.circuits[limitID] = circuit
            return true
        }
    }

    public func closeCircuit(_ limitID: String) async throws {
        self.state.withLock { $0.circuits[limitID] = nil }
    }

    public func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> Store.BudgetState {
        self.state.withLock { state in
            var entry = state.budgets[key] ?? (day, 0)
            if entry.day != day { entry = (day, 0) }
            defer { state.budgets[key] = entry }
            guard entry.spent < budget else {
                return Store.BudgetState(granted: false, spent: entry.spent, budget: budget)
            }
            entry.spent += 1
            return Store.BudgetState(granted: true, spent: entry.spent, budget: budget)
        }
    }

    public func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws {
        self.state.withLock { $0.budgets[key] = (day, budget) }
    }
}

/// Microseconds since the epoch, from the system's wall clock.
public func wallClockMicroseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
}

/// A duration in whole microseconds.
func microseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
