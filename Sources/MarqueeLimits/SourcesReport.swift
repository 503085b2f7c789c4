import MarqueeCore
public import MarqueeStore

import struct Foundation.Date

/// What `marquee sources` shows: each upstream source's limit, the pipeline's pace against it, which workers make
/// that pace, its daily budget and whether it is paused, read from one ``Store/CoordinationSnapshot``.
///
/// There is one row per limit (a source, a key and an upstream host), and one for each paused or budgeted source
/// that has no limit row (a source without a rate limit can still be paused or budgeted). Rates and 429s count
/// only the live workers (members the store still lists): a worker that stopped no longer adds to the pace.
///
/// Its JSON form (`Encodable`) is a contract for scripts (docs/operating.md): snake_case keys, every key present
/// (`null` when unknown or not applicable), times as ISO 8601 and epoch milliseconds (`*_ms`), rates in
/// requests per second.
public struct SourcesReport: Sendable, Hashable {
    /// The store's clock when it was read, in microseconds since the epoch.
    public var now: Int64
    /// One row per limit, by source, key and host.
    public var rows: [Row]
    /// Live workers that reported figures for at least one limit.
    public var workers: Int

    /// Whether the store holds no limit, budget or paused source yet.
    public var isEmpty: Bool { self.rows.isEmpty }

    /// One source, key and upstream host.
    public struct Row: Sendable, Hashable {
        /// `source:keyID@host`: the limit's id in the store, also the id of its budget and its pause.
        public var id: String
        public var source: String
        /// The key's fingerprint (`key-1a2b3c4d`, or `anonymous`); `nil` when the id does not say.
        public var keyID: String?
        /// The upstream's `host:port`; `nil` when the id does not say.
        public var host: String?
        /// The configured requests per second for the whole pipeline; `nil` without a rate limit.
        public var limit: Double?
        /// Requests per second the live workers started lately, summed.
        public var rate: Double
        /// The slow-down after 429s (1: none, down to 0.25); `nil` without a limit row.
        public var factor: Double?
        /// When the upstream's `Retry-After` ends (store clock, microseconds), while it is still ahead.
        public var blockedUntil: Int64?
        /// 429s in the last minute, summed over the live workers.
        public var throttledLastMinute: Int
        /// Each live worker's part of ``rate``, by member id.
        public var workers: [WorkerShare]
        /// Today's daily budget; `nil` for a source without one.
        public var budget: Budget?
        /// Why and since when the source is paused for the pipeline; `nil` while it runs.
        public var pause: Pause?
        /// What holds the source back now, if anything.
        public var state: State

        /// Whether the source is paused for the pipeline.
        public var isPaused: Bool { self.pause != nil }
    }

    /// One worker's requests for one limit.
    public struct WorkerShare: Sendable, Hashable {
        /// The member id, `stage/host/pid/xxxx`.
        public var member: String
        /// Requests per second it started lately.
        public var rate: Double
        /// Its fraction (0…1) of the row's rate; `nil` when the row's rate is 0.
        public var share: Double?
    }

    /// A source's daily budget for the upstream's current day.
    ///
    /// The store makes a day's row on that day's first call, so when the newest row's day has ended, nothing has
    /// been spent today: the budget is whole, and its day and reset time are not known yet.
    public struct Budget: Sendable, Hashable {
        /// The upstream's calendar day, `YYYY-MM-DD`; `nil` for a new day no call has taken from yet.
        public var day: String?
        /// Calls allowed in a day.
        public var budget: Int
        /// Calls taken today.
        public var spent: Int
        /// Calls left today.
        public var left: Int
        /// When the day ends, in microseconds since the epoch; `nil` for a new day no call has taken from yet.
        public var resetAt: Int64?
    }

    /// A source paused for the pipeline (an open circuit).
    public struct Pause: Sendable, Hashable {
        /// What the worker that paused it saw (a refused key, a run of failures).
        public var reason: String
        /// When it was paused (store clock, microseconds).
        public var since: Int64
        /// The member that paused it.
        public var by: String
        /// When the next probe may run (store clock, microseconds).
        public var nextProbe: Int64
        /// Probes run since it was paused (each one that failed kept it paused).
        public var probes: Int
    }

    /// What holds a source back, the first that applies in this order.
    public enum State: String, Sendable, Hashable {
        /// Paused for the pipeline until a probe succeeds.
        case paused
        /// Today's budget is spent: no call until the day ends.
        case budgetSpent = "budget_spent"
        /// Waiting for the end of the upstream's `Retry-After`.
        case blocked
        /// Live workers are sending requests.
        case running
        /// Nothing holds it back, and no live worker sent requests lately.
        case idle
    }

    /// The report of `snapshot`, as of the store's clock in it.
    public init(snapshot: Store.CoordinationSnapshot) {
        let now = snapshot.now
        let live = Set(snapshot.members.map(\.member))
        let usage = Dictionary(grouping: snapshot.usage.filter { live.contains($0.member) }, by: \.limitID)
        let circuits = Dictionary(snapshot.circuits.map { ($0.limitID, $0) }, uniquingKeysWith: { first, _ in first })
        // Days are YYYY-MM-DD, so the newest is the greatest string.
        let budgets = Dictionary(
            snapshot.budgets.map { ($0.key, $0) },
            uniquingKeysWith: { $0.day >= $1.day ? $0 : $1 }
        )
        let limits = Dictionary(snapshot.limits.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

        let ids = Set(limits.keys).union(circuits.keys).union(budgets.keys).sorted()
        self.now = now
        self.rows = ids.map { id in
            let limit = limits[id]
            let parsed = Self.parse(id)
            let used = (usage[id] ?? []).sorted { $0.member < $1.member }
            let rate = used.reduce(0) { $0 + Self.finite($1.recentRate) }
            let budget = budgets[id].map { row in
                row.resetAt > now
                    ? Budget(
                        day: row.day,
                        budget: row.budget,
                        spent: row.spent,
                        left: max(0, row.budget - row.spent),
                        resetAt: row.resetAt
                    )
                    : Budget(day: nil, budget: row.budget, spent: 0, left: max(0, row.budget), resetAt: nil)
            }
            let pause = circuits[id].map {
                Pause(reason: $0.reason, since: $0.openedAt, by: $0.openedBy, nextProbe: $0.probeAt, probes: $0.probes)
            }
            let blockedUntil = limit.flatMap { $0.blockedUntil > now ? $0.blockedUntil : nil }
            let state: State =
                if pause != nil {
                    .paused
                } else if budget?.left == 0 {
                    .budgetSpent
                } else if blockedUntil != nil {
                    .blocked
                } else {
                    rate > 0 ? .running : .idle
                }
            return Row(
                id: id,
                source: limit?.source ?? circuits[id]?.source ?? parsed.source,
                keyID: limit?.keyID ?? parsed.keyID,
                host: limit?.host ?? parsed.host,
                limit: limit.flatMap { $0.rate > 0 && $0.rate.isFinite ? $0.rate : nil },
                rate: rate,
                factor: limit.map { Self.finite($0.factor) },
                blockedUntil: blockedUntil,
                throttledLastMinute: used.reduce(0) { $0 + $1.recentThrottled },
                workers: used.map { entry in
                    let memberRate = Self.finite(entry.recentRate)
                    return WorkerShare(
                        member: entry.member,
                        rate: memberRate,
                        share: rate > 0 ? memberRate / rate : nil
                    )
                },
                budget: budget,
                pause: pause,
                state: state
            )
        }
        self.workers = Set(snapshot.usage.lazy.map(\.member).filter { live.contains($0) }).count
    }

    /// `source:keyID@host` taken apart; the whole id as the source when it is not of that form.
    static func parse(_ id: String) -> (source: String, keyID: String?, host: String?) {
        guard let colon = id.firstIndex(of: ":") else { return (id, nil, nil) }
        let rest = id[id.index(after: colon)...]
        guard let at = rest.firstIndex(of: "@") else { return (id, nil, nil) }
        return (String(id[..<colon]), String(rest[..<at]), String(rest[rest.index(after: at)...]))
    }

    private static func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }
}

// MARK: - SourcesReport + Text

extension SourcesReport {
    /// What `marquee sources` prints for a store that holds no limit, budget or paused source.
    public static let emptyMessage =
        "no limits recorded yet: the fetch workers record each source's limit, budget and pause in the store "
        + "as they run"

    /// The report for a terminal: a table of sources, a table of the workers' shares, a line per paused source,
    /// and a summary; ``emptyMessage`` when there is nothing to show.
    public func text() -> String {
        guard !self.isEmpty else { return Self.emptyMessage }
        var sources = Table([
            ("SOURCE", .left), ("KEY", .left), ("HOST", .left), ("LIMIT/S", .right), ("RATE/S", .right),
            ("FACTOR", .right), ("429S/MIN", .right), ("BUDGET LEFT", .right), ("RESETS IN", .right), ("STATE", .left),
        ])
        for row in self.rows {
            let budget = row.budget.map { "\(Self.grouped($0.left)) of \(Self.grouped($0.budget))" } ?? "–"
            let resets = row.budget.flatMap { $0.resetAt.map { self.duration(until: $0) } } ?? "–"
            let state =
                switch row.state {
                case .paused: "paused"
                case .budgetSpent: "budget spent"
                case .blocked: "blocked " + (row.blockedUntil.map { self.duration(until: $0) } ?? "")
                case .running: "running"
                case .idle: "idle"
                }
            sources.append([
                row.source, row.keyID ?? "–", row.host ?? "–",
                row.limit.map { Self.decimal($0, digits: 1) } ?? "none",
                Self.decimal(row.rate, digits: 1), row.factor.map { Self.decimal($0, digits: 2) } ?? "–",
                "\(row.throttledLastMinute)", budget, resets, state,
            ])
        }
        var blocks = [sources.render()]

        let shares = self.rows.flatMap { row in row.workers.map { (row, $0) } }
        if !shares.isEmpty {
            var table = Table([
                ("SOURCE", .left), ("KEY", .left), ("HOST", .left), ("WORKER", .left), ("RATE/S", .right),
                ("SHARE", .right),
            ])
            for (row, worker) in shares {
                table.append([
                    row.source, row.keyID ?? "–", row.host ?? "–", worker.member,
                    Self.decimal(worker.rate, digits: 1),
                    worker.share.map { Self.decimal($0 * 100, digits: 1) + "%" } ?? "–",
                ])
            }
            blocks.append(table.render())
        }

        let paused = self.rows.compactMap { row in row.pause.map { (row, $0) } }
        if !paused.isEmpty {
            blocks.append(
                paused.map { row, pause in
                    let probe = pause.nextProbe > self.now ? "in \(self.duration(until: pause.nextProbe))" : "due now"
                    let since = "\(self.duration(since: pause.since)) (since \(Self.iso8601(pause.since)))"
                    return "\(row.id) paused for \(since) by \(pause.by): \(Self.printable(pause.reason)); "
                        + "next probe \(probe), \(Self.count(pause.probes, "probe")) so far"
                }.joined(separator: "\n")
            )
        }

        let pausedCount = paused.isEmpty ? "" : " (\(paused.count) paused)"
        blocks.append(
            "\(Self.count(self.rows.count, "source"))\(pausedCount), \(Self.count(self.workers, "worker")) reporting; "
                + "store clock \(Self.iso8601(self.now))"
        )
        return blocks.joined(separator: "\n\n")
    }

    /// A table aligned by character count: every cell is ASCII (names, ids, hosts, numbers), the free text of a
    /// pause's reason stays out of it.
    private struct Table {
        enum Alignment { case left, right }

        var columns: [(header: String, alignment: Alignment)]
        var rows: [[String]] = []

        init(_ columns: [(header: String, alignment: Alignment)]) { self.columns = columns }

        mutating func append(_ row: [String]) { self.rows.append(row.map(SourcesReport.printable)) }

        /// The header and the rows, two spaces between columns, no trailing spaces.
        func render() -> String {
            let widths = self.columns.indices.map { index in
                ([self.columns[index].header] + self.rows.map { $0[index] }).map(\.count).max() ?? 0
            }
            func line(_ values: [String]) -> String {
                var text = ""
                for (index, value) in values.enumerated() {
                    if index > 0 { text += "  " }
                    let padding = String(repeating: " ", count: widths[index] - value.count)
                    text += self.columns[index].alignment == .left ? value + padding : padding + value
                }
                while text.last == " " { text.removeLast() }
                return text
            }
            return ([line(self.columns.map(\.header))] + self.rows.map(line)).joined(separator: "\n")
        }
    }

    /// The time from now to `microseconds` on the store's clock (0 when it has passed).
    private func duration(until microseconds: Int64) -> String {
        Self.duration(microseconds: max(0, microseconds - self.now))
    }

    /// The time from `microseconds` on the store's clock to now (0 when it is ahead).
    private func duration(since microseconds: Int64) -> String {
        Self.duration(microseconds: max(0, self.now - microseconds))
    }

    /// Two units at most: `850ms`, `4.2s`, `3m05s`, `2h10m`, `1d04h`.
    static func duration(microseconds: Int64) -> String {
        Duration.microseconds(microseconds).compactDescription
    }

    static func grouped(_ value: Int) -> String { value.groupedDescription }

    /// A number with `digits` decimals.
    static func decimal(_ value: Double, digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + grouped(Int(whole)) }
        return sign + grouped(Int(whole)) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// `1 source`, `3 sources`.
    static func count(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// Line breaks, tabs and other control characters made spaces, so one value stays on one line.
    static func printable(_ text: String) -> String {
        String(
            text.map { $0.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) } ? " " : $0 }
        )
    }

    /// `2026-11-22T15:40:02Z` for microseconds since the epoch (the second it falls in).
    static func iso8601(_ microseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(Self.seconds(microseconds)))
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    /// The whole seconds since the epoch, rounded down.
    private static func seconds(_ microseconds: Int64) -> Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds + 1) / 1_000_000 - 1
    }
}

// MARK: - SourcesReport + Encodable

extension SourcesReport: Encodable {
    enum CodingKeys: String, CodingKey {
        case now
        case nowMilliseconds = "now_ms"
        case workers, sources
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.iso8601Milliseconds(self.now), forKey: .now)
        try container.encode(self.now / 1000, forKey: .nowMilliseconds)
        try container.encode(self.workers, forKey: .workers)
        try container.encode(self.rows, forKey: .sources)
    }

    /// `2026-11-22T15:40:02.120Z` for microseconds since the epoch: the same millisecond as the `_ms` key beside it
    /// (a `Double` of seconds can fall just short of it and be formatted a millisecond early).
    static func iso8601Milliseconds(_ microseconds: Int64) -> String {
        let milliseconds = String((microseconds - Self.seconds(microseconds) * 1_000_000) / 1000)
        return String(self.iso8601(microseconds).dropLast()) + "."
            + String(repeating: "0", count: 3 - milliseconds.count)
            + milliseconds + "Z"
    }

    /// A rate or fraction to the thousandth: what the store's figures mean, without binary noise.
    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}

extension SourcesReport.Row: Encodable {
    enum CodingKeys: String, CodingKey {
        case id, source
        case keyID = "key_id"
        case host, limit, rate, factor
        case blockedUntil = "blocked_until"
        case blockedUntilMilliseconds = "blocked_until_ms"
        case throttledLastMinute = "throttled_last_minute"
        case workers
        case budget, paused, pause, state
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.source, forKey: .source)
        try container.encode(self.keyID, forKey: .keyID)
        try container.encode(self.host, forKey: .host)
        try container.encode(self.limit.map(SourcesReport.rounded), forKey: .limit)
        try container.encode(SourcesReport.rounded(self.rate), forKey: .rate)
        try container.encode(self.factor.map(SourcesReport.rounded), forKey: .factor)
        try container.encode(self.blockedUntil.map(SourcesReport.iso8601Milliseconds), forKey: .blockedUntil)
        try container.encode(self.blockedUntil.map { $0 / 1000 }, forKey: .blockedUntilMilliseconds)
        try container.encode(self.throttledLastMinute, forKey: .throttledLastMinute)
        try container.encode(self.workers, forKey: .workers)
        try container.encode(self.budget, forKey: .budget)
        try container.encode(self.isPaused, forKey: .paused)
        try container.encode(self.pause, forKey: .pause)
        try container.encode(self.state.rawValue, forKey: .state)
    }
}

extension SourcesReport.WorkerShare: Encodable {
    enum CodingKeys: String, CodingKey {
        case member, rate, share
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.member, forKey: .member)
        try container.encode(SourcesReport.rounded(self.rate), forKey: .rate)
        try container.encode(self.share.map(SourcesReport.rounded), forKey: .share)
    }
}

extension SourcesReport.Budget: Encodable {
    enum CodingKeys: String, CodingKey {
        case day, budget, spent, left
        case resetsAt = "resets_at"
        case resetsAtMilliseconds = "resets_at_ms"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.day, forKey: .day)
        try container.encode(self.budget, forKey: .budget)
        try container.encode(self.spent, forKey: .spent)
        try container.encode(self.left, forKey: .left)
        try container.encode(self.resetAt.map(SourcesReport.iso8601Milliseconds), forKey: .resetsAt)
        try container.encode(self.resetAt.map { $0 / 1000 }, forKey: .resetsAtMilliseconds)
    }
}

extension SourcesReport.Pause: Encodable {
    enum CodingKeys: String, CodingKey {
        case reason, since
        case sinceMilliseconds = "since_ms"
        case by
        case nextProbe = "next_probe"
        case nextProbeMilliseconds = "next_probe_ms"
        case probes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(SourcesReport.iso8601Milliseconds(self.since), forKey: .since)
        try container.encode(self.since / 1000, forKey: .sinceMilliseconds)
        try container.encode(self.by, forKey: .by)
        try container.encode(SourcesReport.iso8601Milliseconds(self.nextProbe), forKey: .nextProbe)
        try container.encode(self.nextProbe / 1000, forKey: .nextProbeMilliseconds)
        try container.encode(self.probes, forKey: .probes)
    }
}
