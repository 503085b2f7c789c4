import MarqueeKafka

import struct Foundation.Date
import class Foundation.JSONEncoder

/// The stages judged at one moment, and whether any exceeds a lag limit: what `marquee lag` prints and a
/// dashboard serves.
///
/// Its JSON form (``json()``) is a contract for scripts; docs/lag.md lists every field. Every field is always
/// present (`null` when unknown), times are epoch milliseconds and ISO 8601, durations are seconds.
public struct LagReport: Sendable, Hashable {
    /// The time of the latest observation (epoch ms).
    public var time: Int64
    /// Each stage judged over its window, in the order sampled.
    public var stages: [GroupLag]
    /// The limit on each stage's due lag (``LagTotals/dueLag``), if one was set.
    public var maxLag: Int64?

    /// A report of these stages; its time is the latest of theirs.
    public init(stages: [GroupLag], maxLag: Int64? = nil) {
        self.stages = stages
        self.maxLag = maxLag
        self.time = stages.map(\.time).max() ?? 0
    }

    /// The stages whose due lag is above ``maxLag`` (none without a limit).
    ///
    /// Retry tiers' not-yet-due messages do not count: they wait for their time by design.
    public var exceeding: [GroupLag] {
        guard let maxLag = self.maxLag else { return [] }
        return self.stages.filter { $0.totals.dueLag > maxLag }
    }

    /// The report as one line of JSON (keys sorted).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(JSONReport(self)), as: UTF8.self)
        } catch {
            // Every value is a string, an integer, a finite number, a bool, null, an array or an object.
            preconditionFailure("a lag report could not be encoded as JSON: \(error)")
        }
    }
}

// MARK: - LagReport + JSON

private struct JSONReport: Encodable {
    let report: LagReport

    init(_ report: LagReport) { self.report = report }

    enum Keys: String, CodingKey {
        case time
        case timeMilliseconds = "time_ms"
        case maxLag = "max_lag"
        case maxLagExceeded = "max_lag_exceeded"
        case stages
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.iso8601(self.report.time), forKey: .time)
        try container.encode(self.report.time, forKey: .timeMilliseconds)
        try container.encode(self.report.maxLag, forKey: .maxLag)
        try container.encode(!self.report.exceeding.isEmpty, forKey: .maxLagExceeded)
        try container.encode(self.report.stages.map { JSONStage($0, maxLag: self.report.maxLag) }, forKey: .stages)
    }

    static func iso8601(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

private struct JSONStage: Encodable {
    let stage: GroupLag
    let maxLag: Int64?

    init(_ stage: GroupLag, maxLag: Int64?) {
        self.stage = stage
        self.maxLag = maxLag
    }

    enum Keys: String, CodingKey {
        case stage, group, status, reason, members
        case groupState = "group_state"
        case samples
        case windowSeconds = "window_seconds"
        case maxLagExceeded = "max_lag_exceeded"
        case totals, partitions
        case missingTopics = "missing_topics"
        case notes
        case otherConsumers = "other_consumers"
    }

    enum TotalsKeys: String, CodingKey {
        case lag
        case lagDue = "lag_due"
        case notYetDue = "not_yet_due"
        case overdue, unscanned
        case lagSeconds = "lag_seconds"
        case rate
        case drainSeconds = "drain_seconds"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(self.stage.stage, forKey: .stage)
        try container.encode(self.stage.group, forKey: .group)
        try container.encode(self.stage.status.rawValue, forKey: .status)
        try container.encode(self.stage.reason, forKey: .reason)
        try container.encode(self.stage.members, forKey: .members)
        try container.encode(self.stage.state.rawValue, forKey: .groupState)
        try container.encode(self.stage.samples, forKey: .samples)
        try container.encode(JSONNumber.seconds(self.stage.window), forKey: .windowSeconds)
        try container.encode(self.maxLag.map { self.stage.totals.dueLag > $0 } ?? false, forKey: .maxLagExceeded)
        let totals = self.stage.totals
        var nested = container.nestedContainer(keyedBy: TotalsKeys.self, forKey: .totals)
        try nested.encode(totals.lag, forKey: .lag)
        try nested.encode(totals.dueLag, forKey: .lagDue)
        try nested.encode(totals.notYetDue, forKey: .notYetDue)
        try nested.encode(totals.overdue, forKey: .overdue)
        try nested.encode(totals.unscanned, forKey: .unscanned)
        try nested.encode(totals.lagAge.map(JSONNumber.seconds), forKey: .lagSeconds)
        try nested.encode(totals.rate.map(JSONNumber.rounded), forKey: .rate)
        try nested.encode(totals.drainTime.map(JSONNumber.seconds), forKey: .drainSeconds)
        try container.encode(self.stage.partitions.map(JSONPartition.init), forKey: .partitions)
        try container.encode(self.stage.missingTopics, forKey: .missingTopics)
        try container.encode(self.stage.notes, forKey: .notes)
        try container.encode(self.stage.unread?.consumers ?? [], forKey: .otherConsumers)
    }
}

private struct JSONPartition: Encodable {
    let partition: PartitionLag

    init(_ partition: PartitionLag) { self.partition = partition }

    enum Keys: String, CodingKey {
        case topic, partition, tier, committed, start, end, lag
        case lagDue = "lag_due"
        case lagSeconds = "lag_seconds"
        case oldestTimestamp = "oldest_timestamp_ms"
        case rate
        case drainSeconds = "drain_seconds"
        case status
        case notYetDue = "not_yet_due"
        case overdue, unscanned
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        let sample = self.partition.sample
        try container.encode(sample.partition.topic, forKey: .topic)
        try container.encode(sample.partition.partition, forKey: .partition)
        try container.encode(sample.tier, forKey: .tier)
        try container.encode(sample.committed, forKey: .committed)
        try container.encode(sample.start, forKey: .start)
        try container.encode(sample.end, forKey: .end)
        try container.encode(sample.lag, forKey: .lag)
        try container.encode(sample.dueLag, forKey: .lagDue)
        try container.encode(self.partition.lagAge.map(JSONNumber.seconds), forKey: .lagSeconds)
        try container.encode(sample.lag > 0 ? sample.oldestUnconsumedTimestamp : nil, forKey: .oldestTimestamp)
        try container.encode(self.partition.rate.map(JSONNumber.rounded), forKey: .rate)
        try container.encode(self.partition.drainTime.map(JSONNumber.seconds), forKey: .drainSeconds)
        try container.encode(self.partition.status.rawValue, forKey: .status)
        try container.encode(sample.retry?.notYetDue, forKey: .notYetDue)
        try container.encode(sample.retry?.overdue, forKey: .overdue)
        try container.encode(sample.retry?.unscanned, forKey: .unscanned)
    }
}

enum JSONNumber {
    /// Seconds, to the millisecond.
    static func seconds(_ duration: Duration) -> Double {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return Double(milliseconds) / 1000
    }

    /// To three decimals.
    static func rounded(_ value: Double) -> Double {
        (value * 1000).rounded() / 1000
    }
}
