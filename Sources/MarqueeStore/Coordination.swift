/// What the workers of one pipeline share through the store to hold the upstreams' limits together: the
/// members, each limit's schedule of requests, daily budgets and paused sources (docs/limits.md).
///
/// Every time is read from the store's own clock inside the statement (``SQLDialect/nowMicroseconds``), so the
/// answers of workers on different machines are on one time line; a worker turns an answer into its own clock
/// with the store's `now` that comes with it.
extension Store {
    /// Slots granted by ``reserve(_:count:member:)``: `count` request start times, `interval` apart from `start`.
    public struct Reservation: Hashable, Sendable {
        /// The first slot, in microseconds on the store's clock.
        public var start: Int64
        /// Microseconds between two slots (the limit's rate, slowed by its factor).
        public var interval: Double
        public var count: Int
        /// The store's clock when it answered, in microseconds.
        public var now: Int64
        /// The slow-down factor after 429s (1: none).
        public var factor: Double

        public init(start: Int64, interval: Double, count: Int, now: Int64, factor: Double) {
            self.start = start
            self.interval = interval
            self.count = count
            self.now = now
            self.factor = factor
        }
    }

    /// A limit as ``reserve(_:count:member:)`` needs it.
    public struct SharedLimit: Hashable, Sendable {
        /// `source:key@host`: one schedule for every worker with the same source, key and upstream.
        public var id: String
        public var source: String
        /// The key's fingerprint (never the key).
        public var keyID: String
        public var host: String
        /// Requests per second for the whole pipeline, as configured.
        public var rate: Double
        /// The rate the schedule keeps: the configured one less a margin for the jitter between a request's slot
        /// and its arrival upstream.
        public var pace: Double

        public init(id: String, source: String, keyID: String, host: String, rate: Double, pace: Double? = nil) {
            self.id = id
            self.source = source
            self.keyID = keyID
            self.host = host
            self.rate = rate
            self.pace = pace ?? rate
        }
    }

    /// After a 429, how long until the factor starts to recover, and how fast (per second) it does.
    static let factorRecoveryDelay: Int64 = 10_000_000
    static let factorRecoveryPerSecond = 0.02
    /// The lowest the factor goes.
    static let lowestFactor = 0.25

    /// Takes the next `count` request slots of `limit` from the schedule every worker shares (a shared virtual
    /// clock: each slot is one interval after the previous one, whoever took it).
    public func reserve(_ limit: SharedLimit, count: Int, member: String) async throws -> Reservation {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        return try await self.engine.transaction { session in
            try await Self.ensureRow(of: limit, session, dialect)
            let rows = try await session.query(
                dialect.placeholders(
                    "SELECT tat, blocked_until, factor, throttled_at, updated_at, \(now) FROM coord_limits WHERE limit_key = ?"
                        + (dialect == .postgres ? " FOR UPDATE" : "")
                ),
                [.text(limit.id)]
            )
            guard let row = rows.first, let tat = row[0].int, let blocked = row[1].int, let factor = row[2].real,
                let throttledAt = row[3].int, let updatedAt = row[4].int, let storeNow = row[5].int
            else { throw StoreError(.rejected, "coord_limits has no row for \(limit.id)") }
            let recovered = Self.recoveredFactor(factor, throttledAt: throttledAt, updatedAt: updatedAt, now: storeNow)
            let interval = 1_000_000 / (limit.pace * recovered)
            let start = max(tat, storeNow, blocked)
            let next = start + Int64((Double(count) * interval).rounded())
            try await session.execute(
                dialect.placeholders(
                    "UPDATE coord_limits SET rate = ?, factor = ?, tat = ?, updated_at = ? WHERE limit_key = ?"
                ),
                [.real(limit.rate), .real(recovered), .int(next), .int(storeNow), .text(limit.id)]
            )
            return Reservation(start: start, interval: interval, count: count, now: storeNow, factor: recovered)
        }
    }

    /// Creates `limit`'s row (an empty schedule, no block, factor 1) unless it exists.
    private static func ensureRow(of limit: SharedLimit, _ session: any SQLSession, _ dialect: SQLDialect) async throws
    {
        try await session.execute(
            dialect.placeholders(
                """
                INSERT INTO coord_limits (limit_key, source, key_id, host, rate, factor, tat, blocked_until, throttled_at, updated_at)
                VALUES (?, ?, ?, ?, ?, 1.0, 0, 0, 0, 0) ON CONFLICT (limit_key) DO NOTHING
                """
            ),
            [.text(limit.id), .text(limit.source), .text(limit.keyID), .text(limit.host), .real(limit.rate)]
        )
    }

    /// The factor after recovering since its last update: unchanged until ``factorRecoveryDelay`` after the last
    /// 429, then up by ``factorRecoveryPerSecond`` a second, to 1.
    public static func recoveredFactor(_ factor: Double, throttledAt: Int64, updatedAt: Int64, now: Int64) -> Double {
        guard factor < 1 else { return 1 }
        let from = max(updatedAt, throttledAt + Self.factorRecoveryDelay)
        guard now > from else { return factor }
        return min(1, factor + Double(now - from) / 1e6 * Self.factorRecoveryPerSecond)
    }

    /// The factor after one more 429: ×0.8, down to ``lowestFactor`` at most.
    public static func slowedFactor(_ factor: Double) -> Double { max(Self.lowestFactor, factor * 0.8) }

    /// Records an upstream's 429 for `limit`: no slot starts before `retryAfter` has passed, and the pipeline's
    /// pace is slowed (×0.8, at most down to a quarter) until the upstream stops refusing.
    ///
    /// - Returns: The end of the block, on the store's clock, and the store's clock now.
    @discardableResult
    public func throttle(_ limit: SharedLimit, retryAfter: Duration?) async throws -> (blockedUntil: Int64, now: Int64)
    {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        let wait =
            retryAfter.map { Int64($0.components.seconds) * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000 }
            ?? 0
        return try await self.engine.transaction { session in
            try await Self.ensureRow(of: limit, session, dialect)
            let rows = try await session.query(
                dialect.placeholders(
                    "SELECT blocked_until, factor, throttled_at, updated_at, \(now) FROM coord_limits WHERE limit_key = ?"
                        + (dialect == .postgres ? " FOR UPDATE" : "")
                ),
                [.text(limit.id)]
            )
            guard let row = rows.first, let blocked = row[0].int, let factor = row[1].real,
                let throttledAt = row[2].int,
                let updatedAt = row[3].int, let storeNow = row[4].int
            else { throw StoreError(.rejected, "coord_limits has no row for \(limit.id)") }
            // One slow-down per second at most: the 429s of one burst are one signal.
            let current = Self.recoveredFactor(factor, throttledAt: throttledAt, updatedAt: updatedAt, now: storeNow)
            let slowed = storeNow - throttledAt >= 1_000_000 ? Self.slowedFactor(current) : current
            let until = max(blocked, storeNow + wait)
            try await session.execute(
                dialect.placeholders(
                    "UPDATE coord_limits SET factor = ?, blocked_until = ?, throttled_at = ?, updated_at = ? WHERE limit_key = ?"
                ),
                [.real(slowed), .int(until), .int(storeNow), .int(storeNow), .text(limit.id)]
            )
            return (until, storeNow)
        }
    }

    // MARK: - Members and heartbeats

    /// One worker's figures for one limit, written with its heartbeat.
    public struct LimitUsage: Hashable, Sendable {
        public var limitID: String
        /// Requests started since the worker started.
        public var requests: Int64
        /// 429s since the worker started.
        public var throttled: Int64
        /// Time its requests waited for their slots, in microseconds, since the worker started.
        public var waitedMicroseconds: Int64
        /// Requests per second over the last seconds.
        public var recentRate: Double
        /// 429s in the last minute.
        public var recentThrottled: Int

        public init(
            limitID: String,
            requests: Int64,
            throttled: Int64,
            waitedMicroseconds: Int64,
            recentRate: Double,
            recentThrottled: Int
        ) {
            self.limitID = limitID
            self.requests = requests
            self.throttled = throttled
            self.waitedMicroseconds = waitedMicroseconds
            self.recentRate = recentRate
            self.recentThrottled = recentThrottled
        }
    }

    /// A paused source, as every worker reads it.
    public struct Circuit: Hashable, Sendable {
        public var limitID: String
        public var source: String
        public var reason: String
        /// Microseconds on the store's clock.
        public var openedAt: Int64
        public var openedBy: String
        /// When the next probe may run (store clock, microseconds).
        public var probeAt: Int64
        /// Probes that failed since it opened.
        public var probes: Int

        public init(
            limitID: String,
            source: String,
            reason: String,
            openedAt: Int64,
            openedBy: String,
            probeAt: Int64,
            probes: Int
        ) {
            self.limitID = limitID
            self.source = source
            self.reason = reason
            self.openedAt = openedAt
            self.openedBy = openedBy
            self.probeAt = probeAt
            self.probes = probes
        }
    }

    /// What a heartbeat reads back.
    public struct CoordinationView: Sendable {
        /// Live members of the worker's stage (itself included).
        public var members: Int
        public var circuits: [Circuit]
        /// Each limit's `Retry-After` block end (store clock, microseconds; 0: none) and factor.
        public var limits: [String: (blockedUntil: Int64, factor: Double)]
        /// The store's clock when it answered, in microseconds.
        public var now: Int64

        public init(
            members: Int,
            circuits: [Circuit],
            limits: [String: (blockedUntil: Int64, factor: Double)],
            now: Int64
        ) {
            self.members = members
            self.circuits = circuits
            self.limits = limits
            self.now = now
        }
    }

    /// Says that `member` is alive, writes its figures, forgets members not seen for `expiry`, and reads back
    /// the live members of `stage`, the paused sources and the limits' blocks.
    public func heartbeat(
        member: String,
        stage: String,
        host: String,
        startedAt: Int64,
        usage: [LimitUsage],
        expiry: Duration
    ) async throws -> CoordinationView {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        let expiryMicroseconds =
            Int64(expiry.components.seconds) * 1_000_000 + expiry.components.attoseconds / 1_000_000_000_000
        return try await self.engine.transaction { session in
            try await session.execute(
                dialect.placeholders(
                    """
                    INSERT INTO coord_members (member, stage, host, started_at, seen_at) VALUES (?, ?, ?, ?, \(now))
                    ON CONFLICT (member) DO UPDATE SET seen_at = excluded.seen_at
                    """
                ),
                [.text(member), .text(stage), .text(host), .int(startedAt)]
            )
            try await session.execute(
                dialect.placeholders("DELETE FROM coord_members WHERE seen_at < \(now) - ?"),
                [.int(expiryMicroseconds)]
            )
            try await session.execute(
                "DELETE FROM coord_usage WHERE member NOT IN (SELECT member FROM coord_members)",
                []
            )
            for entry in usage {
                try await session.execute(
                    dialect.placeholders(
                        """
                        INSERT INTO coord_usage (limit_key, member, requests, throttled, waited_us, recent_rate, recent_throttled, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, \(now))
                        ON CONFLICT (limit_key, member) DO UPDATE SET requests = excluded.requests, throttled = excluded.throttled,
                        waited_us = excluded.waited_us, recent_rate = excluded.recent_rate,
                        recent_throttled = excluded.recent_throttled, updated_at = excluded.updated_at
                        """
                    ),
                    [
                        .text(entry.limitID), .text(member), .int(entry.requests), .int(entry.throttled),
                        .int(entry.waitedMicroseconds),
                        .real(entry.recentRate), .int(Int64(entry.recentThrottled)),
                    ]
                )
            }
            let counted = try await session.query(
                dialect.placeholders("SELECT COUNT(*), \(now) FROM coord_members WHERE stage = ?"),
                [.text(stage)]
            )
            let circuits = try await session.query(
                "SELECT limit_key, source, reason, opened_at, opened_by, probe_at, probes FROM coord_circuits",
                []
            )
            let limits = try await session.query(
                "SELECT limit_key, blocked_until, factor, throttled_at, updated_at FROM coord_limits",
                []
            )
            let storeNow = counted.first?[1].int ?? 0
            var view = CoordinationView(
                members: Int(counted.first?[0].int ?? 1),
                circuits: circuits.compactMap(Self.circuit),
                limits: [:],
                now: storeNow
            )
            for row in limits {
                guard let id = row[0].text, let blocked = row[1].int, let factor = row[2].real,
                    let throttledAt = row[3].int,
                    let updatedAt = row[4].int
                else { continue }
                view.limits[id] = (
                    blocked, Self.recoveredFactor(factor, throttledAt: throttledAt, updatedAt: updatedAt, now: storeNow)
                )
            }
            return view
        }
    }

    /// Removes `member` and its figures (a worker that stops): its part is the others' at once.
    public func leave(member: String) async throws {
        let dialect = self.engine.dialect
        try await self.engine.transaction { session in
            try await session.execute(dialect.placeholders("DELETE FROM coord_usage WHERE member = ?"), [.text(member)])
            try await session.execute(
                dialect.placeholders("DELETE FROM coord_members WHERE member = ?"),
                [.text(member)]
            )
        }
    }

    private static func circuit(_ row: [SQLValue]) -> Circuit? {
        guard let id = row[0].text, let source = row[1].text, let reason = row[2].text, let openedAt = row[3].int,
            let openedBy = row[4].text, let probeAt = row[5].int, let probes = row[6].int
        else { return nil }
        return Circuit(
            limitID: id,
            source: source,
            reason: reason,
            openedAt: openedAt,
            openedBy: openedBy,
            probeAt: probeAt,
            probes: Int(probes)
        )
    }

    // MARK: - Paused sources

    /// Pauses `limit`'s source for the pipeline (kept as it is when it is already paused); the first probe may run
    /// after `probeAfter`.
    ///
    /// - Returns: The circuit as it is now.
    public func openCircuit(
        _ limit: SharedLimit,
        reason: String,
        member: String,
        probeAfter: Duration
    ) async throws -> Circuit {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        let after =
            Int64(probeAfter.components.seconds) * 1_000_000 + probeAfter.components.attoseconds / 1_000_000_000_000
        return try await self.engine.transaction { session in
            try await session.execute(
                dialect.placeholders(
                    """
                    INSERT INTO coord_circuits (limit_key, source, reason, opened_at, opened_by, probe_at, probes)
                    VALUES (?, ?, ?, \(now), ?, \(now) + ?, 0) ON CONFLICT (limit_key) DO NOTHING
                    """
                ),
                [.text(limit.id), .text(limit.source), .text(String(reason.prefix(500))), .text(member), .int(after)]
            )
            let rows = try await session.query(
                dialect.placeholders(
                    "SELECT limit_key, source, reason, opened_at, opened_by, probe_at, probes FROM coord_circuits WHERE limit_key = ?"
                ),
                [.text(limit.id)]
            )
            guard let circuit = rows.first.flatMap(Self.circuit) else {
                throw StoreError(.rejected, "coord_circuits has no row for \(limit.id)")
            }
            return circuit
        }
    }

    /// Claims the next probe of a paused source: `true` for one caller once its probe time has come (the next
    /// probe is then due `backoff(probes)` later), `false` for everyone else, and when the source is not paused.
    public func claimProbe(_ limitID: String, backoff: @Sendable (Int) -> Duration) async throws -> Bool {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        return try await self.engine.transaction { session in
            let rows = try await session.query(
                dialect.placeholders(
                    "SELECT probe_at, probes, \(now) FROM coord_circuits WHERE limit_key = ?"
                        + (dialect == .postgres ? " FOR UPDATE" : "")
                ),
                [.text(limitID)]
            )
            guard let row = rows.first, let probeAt = row[0].int, let probes = row[1].int, let storeNow = row[2].int,
                probeAt <= storeNow
            else { return false }
            let wait = backoff(Int(probes) + 1)
            let next =
                storeNow + Int64(wait.components.seconds) * 1_000_000 + wait.components.attoseconds / 1_000_000_000_000
            try await session.execute(
                dialect.placeholders("UPDATE coord_circuits SET probe_at = ?, probes = probes + 1 WHERE limit_key = ?"),
                [.int(next), .text(limitID)]
            )
            return true
        }
    }

    /// Resumes a paused source for the pipeline.
    public func closeCircuit(_ limitID: String) async throws {
        let dialect = self.engine.dialect
        try await self.engine.transaction { session in
            try await session.execute(
                dialect.placeholders("DELETE FROM coord_circuits WHERE limit_key = ?"),
                [.text(limitID)]
            )
        }
    }

    // MARK: - Daily budgets

    /// A budget's state after ``takeBudget(_:day:budget:resetAt:)``.
    public struct BudgetState: Hashable, Sendable {
        /// Whether a call was granted.
        public var granted: Bool
        public var spent: Int
        public var budget: Int

        public init(granted: Bool, spent: Int, budget: Int) {
            self.granted = granted
            self.spent = spent
            self.budget = budget
        }
    }

    /// Takes one call from `key`'s budget for `day` (the upstream's calendar day, `YYYY-MM-DD`); refused, taking
    /// nothing, when it is spent.
    public func takeBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws -> BudgetState {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        return try await self.engine.transaction { session in
            try await session.execute(
                dialect.placeholders(
                    """
                    INSERT INTO coord_budgets (budget_key, day, budget, spent, reset_at, updated_at) VALUES (?, ?, ?, 0, ?, \(now))
                    ON CONFLICT (budget_key, day) DO NOTHING
                    """
                ),
                [.text(key), .text(day), .int(Int64(budget)), .int(resetAt)]
            )
            let taken = try await session.query(
                dialect.placeholders(
                    """
                    UPDATE coord_budgets SET spent = spent + 1, budget = ?, updated_at = \(now)
                    WHERE budget_key = ? AND day = ? AND spent < ? RETURNING spent
                    """
                ),
                [.int(Int64(budget)), .text(key), .text(day), .int(Int64(budget))]
            )
            if let spent = taken.first?[0].int { return BudgetState(granted: true, spent: Int(spent), budget: budget) }
            let rows = try await session.query(
                dialect.placeholders("SELECT spent FROM coord_budgets WHERE budget_key = ? AND day = ?"),
                [.text(key), .text(day)]
            )
            return BudgetState(granted: false, spent: Int(rows.first?[0].int ?? Int64(budget)), budget: budget)
        }
    }

    /// Marks `key`'s budget for `day` spent (the upstream said so).
    public func exhaustBudget(_ key: String, day: String, budget: Int, resetAt: Int64) async throws {
        let dialect = self.engine.dialect
        let now = dialect.nowMicroseconds
        try await self.engine.transaction { session in
            try await session.execute(
                dialect.placeholders(
                    """
                    INSERT INTO coord_budgets (budget_key, day, budget, spent, reset_at, updated_at) VALUES (?, ?, ?, ?, ?, \(now))
                    ON CONFLICT (budget_key, day) DO UPDATE SET spent = excluded.budget, updated_at = excluded.updated_at
                    """
                ),
                [.text(key), .text(day), .int(Int64(budget)), .int(Int64(budget)), .int(resetAt)]
            )
        }
    }

    // MARK: - What `marquee sources` shows

    /// Everything the coordination tables hold, read at once.
    public struct CoordinationSnapshot: Sendable {
        public struct Limit: Sendable {
            public var id: String
            public var source: String
            public var keyID: String
            public var host: String
            public var rate: Double
            public var factor: Double
            /// Store clock, microseconds (0: never blocked).
            public var blockedUntil: Int64

            public init(
                id: String,
                source: String,
                keyID: String,
                host: String,
                rate: Double,
                factor: Double,
                blockedUntil: Int64
            ) {
                self.id = id
                self.source = source
                self.keyID = keyID
                self.host = host
                self.rate = rate
                self.factor = factor
                self.blockedUntil = blockedUntil
            }
        }

        public struct Usage: Sendable {
            public var limitID: String
            public var member: String
            public var requests: Int64
            public var throttled: Int64
            public var waitedMicroseconds: Int64
            public var recentRate: Double
            public var recentThrottled: Int

            public init(
                limitID: String,
                member: String,
                requests: Int64,
                throttled: Int64,
                waitedMicroseconds: Int64,
                recentRate: Double,
                recentThrottled: Int
            ) {
                self.limitID = limitID
                self.member = member
                self.requests = requests
                self.throttled = throttled
                self.waitedMicroseconds = waitedMicroseconds
                self.recentRate = recentRate
                self.recentThrottled = recentThrottled
            }
        }

        public struct Member: Sendable {
            public var member: String
            public var stage: String
            public var host: String
            public var startedAt: Int64
            public var seenAt: Int64

            public init(member: String, stage: String, host: String, startedAt: Int64, seenAt: Int64) {
                self.member = member
                self.stage = stage
                self.host = host
                self.startedAt = startedAt
                self.seenAt = seenAt
            }
        }

        public struct Budget: Sendable {
            public var key: String
            public var day: String
            public var budget: Int
            public var spent: Int
            /// Microseconds since the epoch.
            public var resetAt: Int64

            public init(key: String, day: String, budget: Int, spent: Int, resetAt: Int64) {
                self.key = key
                self.day = day
                self.budget = budget
                self.spent = spent
                self.resetAt = resetAt
            }
        }

        public var now: Int64
        public var limits: [Limit]
        public var usage: [Usage]
        public var members: [Member]
        public var budgets: [Budget]
        public var circuits: [Circuit]

        public init(
            now: Int64,
            limits: [Limit],
            usage: [Usage],
            members: [Member],
            budgets: [Budget],
            circuits: [Circuit]
        ) {
            self.now = now
            self.limits = limits
            self.usage = usage
            self.members = members
            self.budgets = budgets
            self.circuits = circuits
        }
    }

    /// Reads the coordination tables (an empty snapshot when the store has never been migrated that far).
    public func coordinationSnapshot() async throws -> CoordinationSnapshot {
        let dialect = self.engine.dialect
        let now = try await self.engine.read("SELECT \(dialect.nowMicroseconds)", []).first?[0].int ?? 0
        guard let version = try await self.schemaVersion(), version >= 2 else {
            return CoordinationSnapshot(now: now, limits: [], usage: [], members: [], budgets: [], circuits: [])
        }
        let limits = try await self.engine.read(
            "SELECT limit_key, source, key_id, host, rate, factor, throttled_at, updated_at, blocked_until FROM coord_limits ORDER BY limit_key",
            []
        ).compactMap { row -> CoordinationSnapshot.Limit? in
            guard let id = row[0].text, let source = row[1].text, let keyID = row[2].text, let host = row[3].text,
                let rate = row[4].real,
                let factor = row[5].real, let throttledAt = row[6].int, let updatedAt = row[7].int,
                let blocked = row[8].int
            else { return nil }
            let current = Self.recoveredFactor(factor, throttledAt: throttledAt, updatedAt: updatedAt, now: now)
            return .init(
                id: id,
                source: source,
                keyID: keyID,
                host: host,
                rate: rate,
                factor: current,
                blockedUntil: blocked
            )
        }
        let usage = try await self.engine.read(
            "SELECT limit_key, member, requests, throttled, waited_us, recent_rate, recent_throttled FROM coord_usage ORDER BY limit_key, member",
            []
        ).compactMap { row -> CoordinationSnapshot.Usage? in
            guard let id = row[0].text, let member = row[1].text, let requests = row[2].int, let throttled = row[3].int,
                let waited = row[4].int, let rate = row[5].real, let recent = row[6].int
            else { return nil }
            return .init(
                limitID: id,
                member: member,
                requests: requests,
                throttled: throttled,
                waitedMicroseconds: waited,
                recentRate: rate,
                recentThrottled: Int(recent)
            )
        }
        let members = try await self.engine.read(
            "SELECT member, stage, host, started_at, seen_at FROM coord_members ORDER BY member",
            []
        )
        .compactMap { row -> CoordinationSnapshot.Member? in
            guard let member = row[0].text, let stage = row[1].text, let host = row[2].text, let started = row[3].int,
                let seen = row[4].int
            else { return nil }
            return .init(member: member, stage: stage, host: host, startedAt: started, seenAt: seen)
        }
        let budgets = try await self.engine.read(
            "SELECT budget_key, day, budget, spent, reset_at FROM coord_budgets ORDER BY budget_key, day",
            []
        ).compactMap { row -> CoordinationSnapshot.Budget? in
            guard let key = row[0].text, let day = row[1].text, let budget = row[2].int, let spent = row[3].int,
                let reset = row[4].int
            else { return nil }
            return .init(key: key, day: day, budget: Int(budget), spent: Int(spent), resetAt: reset)
        }
        let circuits = try await self.engine.read(
            "SELECT limit_key, source, reason, opened_at, opened_by, probe_at, probes FROM coord_circuits ORDER BY limit_key",
            []
        ).compactMap(Self.circuit)
        return CoordinationSnapshot(
            now: now,
            limits: limits,
            usage: usage,
            members: members,
            budgets: budgets,
            circuits: circuits
        )
    }
}

extension SQLDialect {
    /// The store's clock in microseconds since the epoch, as an SQL expression (one value per statement).
    var nowMicroseconds: String {
        switch self {
        case .postgres: "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
        case .sqlite: "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"
        }
    }
}
