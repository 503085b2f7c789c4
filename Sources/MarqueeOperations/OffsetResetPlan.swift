public import MarqueeKafka

import struct Foundation.Date
import class Foundation.ISO8601DateFormatter

/// How `marquee groups reset-offsets` chooses each partition's new offset: the modes of
/// `kafka-consumer-groups --reset-offsets`.
public enum OffsetResetMode: Sendable, Hashable, CustomStringConvertible {
    /// The partition's first retained offset (low watermark).
    case earliest
    /// The partition's end offset (high watermark): the group skips every message there now.
    case latest
    /// The first offset whose message timestamp is at or after this time (epoch milliseconds); the end offset
    /// where no message is that recent.
    case dateTime(milliseconds: Int64)
    /// This offset.
    case offset(Int64)
    /// The committed offset moved by this many messages (negative: back, to read them again).
    case shift(by: Int64)
    /// The offsets another group committed: a group renamed keeps its place (docs/operating.md, "Consumer groups
    /// follow the topic prefix").
    case fromGroup(String)

    /// The one mode among options given on a command line.
    ///
    /// - Parameters:
    ///   - earliest: `--to-earliest` was given.
    ///   - latest: `--to-latest` was given.
    ///   - dateTime: The text of `--to-datetime`, if given (see ``parseDateTime(_:)``).
    ///   - offset: `--to-offset`, if given.
    ///   - shiftBy: `--shift-by`, if given.
    ///   - fromGroup: `--from-group`, if given.
    /// - Throws: An ``OperationsError`` when no mode or more than one is given, or the time cannot be read.
    public static func choosing(
        earliest: Bool,
        latest: Bool,
        dateTime: String?,
        offset: Int64?,
        shiftBy: Int64?,
        fromGroup: String? = nil
    ) throws(OperationsError) -> OffsetResetMode {
        var modes: [OffsetResetMode] = []
        var names: [String] = []
        if earliest {
            modes.append(.earliest)
            names.append("--to-earliest")
        }
        if latest {
            modes.append(.latest)
            names.append("--to-latest")
        }
        if let dateTime {
            modes.append(.dateTime(milliseconds: try Self.parseDateTime(dateTime)))
            names.append("--to-datetime")
        }
        if let offset {
            modes.append(.offset(offset))
            names.append("--to-offset")
        }
        if let shiftBy {
            modes.append(.shift(by: shiftBy))
            names.append("--shift-by")
        }
        if let fromGroup {
            guard !fromGroup.isEmpty else {
                throw OperationsError(.offsetReset, "--from-group: the group name is empty")
            }
            modes.append(.fromGroup(fromGroup))
            names.append("--from-group")
        }
        guard modes.count == 1 else {
            let all = "--to-earliest, --to-latest, --to-datetime T, --to-offset N, --shift-by N or --from-group G"
            if modes.isEmpty { throw OperationsError(.offsetReset, "name how to reset: one of \(all)") }
            throw OperationsError(
                .offsetReset,
                "give one way to reset, not \(names.joined(separator: " and ")): one of \(all)"
            )
        }
        return modes[0]
    }

    /// Milliseconds since 1970 for an ISO 8601 time with its zone: `2026-11-27T06:00:00Z`,
    /// `2026-11-27T15:00:00+09:00`, with or without fractions of a second (`06:00:00.250Z`).
    ///
    /// A time without a zone is refused rather than read in some local zone: the machine running the command
    /// and the operator's idea of "local" differ too often.
    ///
    /// - Throws: An ``OperationsError`` for text that is not such a time.
    public static func parseDateTime(_ text: String) throws(OperationsError) -> Int64 {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        let withFractions = ISO8601DateFormatter()
        withFractions.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: text) ?? withFractions.date(from: text) else {
            throw OperationsError(
                .offsetReset,
                "--to-datetime '\(text)' is not an ISO 8601 time with its zone, such as 2026-11-27T06:00:00Z or "
                    + "2026-11-27T15:00:00+09:00"
            )
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The mode as its flag: `--to-earliest`, `--to-datetime 2026-11-27T06:00:00.000Z`, `--shift-by -5`.
    public var description: String {
        switch self {
        case .earliest: "--to-earliest"
        case .latest: "--to-latest"
        case .dateTime(let milliseconds): "--to-datetime \(Self.format(milliseconds: milliseconds))"
        case .offset(let offset): "--to-offset \(offset)"
        case .shift(let shift): "--shift-by \(shift)"
        case .fromGroup(let group): "--from-group \(group)"
        }
    }

    /// ISO 8601 in UTC with milliseconds, as the mode's description writes a time.
    static func format(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

/// One `--topic` of `reset-offsets`: a topic, and optionally some of its partitions (`orders:0,2,5`), as
/// `kafka-consumer-groups` writes it.
public struct TopicSelection: Sendable, Hashable, CustomStringConvertible {
    /// The topic.
    public var topic: String
    /// The partitions, ascending and each once; `nil` for every partition of the topic.
    public var partitions: [Int32]?

    /// A selection of a topic, or of some of its partitions.
    public init(topic: String, partitions: [Int32]? = nil) {
        self.topic = topic
        self.partitions = partitions.map { Array(Set($0)).sorted() }
    }

    /// Reads `topic` or `topic:0,2,5`.
    ///
    /// - Throws: An ``OperationsError`` for an empty or illegal topic name, or a partition list that is empty or
    ///   holds anything but partition numbers.
    public init(parsing text: String) throws(OperationsError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let topic = String(parts[0])
        guard !topic.isEmpty else { throw OperationsError(.offsetReset, "--topic '\(text)': the topic name is empty") }
        // Kafka's rule for topic names: letters, digits, '.', '_' and '-', at most 249 of them.
        let isLegal =
            topic.utf8.count <= 249
            && topic.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                        || scalar == "." || scalar == "_" || scalar == "-")
            }
        guard isLegal else {
            throw OperationsError(
                .offsetReset,
                "--topic '\(text)': '\(topic)' is not a topic name (letters, digits, '.', '_' and '-' only)"
            )
        }
        guard parts.count == 2 else {
            self.init(topic: topic)
            return
        }
        var partitions: [Int32] = []
        for item in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
            let number = item.filter { $0 != " " }
            guard let partition = Int32(number), partition >= 0 else {
                throw OperationsError(
                    .offsetReset,
                    "--topic '\(text)': '\(item)' is not a partition number (write topic:0,2,5)"
                )
            }
            partitions.append(partition)
        }
        self.init(topic: topic, partitions: partitions)
    }

    /// `orders`, or `orders:0,2,5`.
    public var description: String {
        guard let partitions else { return self.topic }
        return "\(self.topic):" + partitions.map(String.init).joined(separator: ",")
    }

    /// The selections with each topic once: the union of its partitions, every partition where any selection
    /// names the topic alone.
    public static func merged(_ selections: [TopicSelection]) -> [TopicSelection] {
        var byTopic: [String: Set<Int32>?] = [:]
        for selection in selections {
            switch (byTopic[selection.topic], selection.partitions) {
            case (nil, let partitions):
                byTopic[selection.topic] = .some(partitions.map(Set.init))
            case (.some(.some(let known)), .some(let partitions)):
                byTopic[selection.topic] = .some(known.union(partitions))
            case (.some, _):
                byTopic[selection.topic] = .some(nil)
            }
        }
        return byTopic.keys.sorted().map { topic in
            TopicSelection(topic: topic, partitions: (byTopic[topic] ?? nil).map(Array.init))
        }
    }
}

/// What a reset of a consumer group's offsets would do, partition by partition: the plan `reset-offsets` prints,
/// and commits with `--execute`.
///
/// Computing it needs no broker: give it the group's committed offsets, the partitions' watermarks and, for
/// ``OffsetResetMode/dateTime(milliseconds:)``, the offsets the broker found for the time. As
/// `kafka-consumer-groups` does, every new offset is kept within the partition's range: one below the first
/// retained offset becomes that offset, one past the end offset becomes the end offset.
public struct OffsetResetPlan: Sendable, Hashable {
    /// One partition's reset.
    public struct Row: Sendable, Hashable {
        /// The partition.
        public var partition: KafkaTopicPartition
        /// The group's committed offset now, or `nil` where it committed none.
        public var current: Int64?
        /// The offset the reset commits.
        public var new: Int64
        /// The offset the mode asked for, before it was kept within the partition's range.
        public var requested: Int64
        /// The partition's first retained offset and end offset.
        public var watermarks: KafkaWatermarks

        /// A row, e.g. for tests of code that prints one.
        public init(
            partition: KafkaTopicPartition,
            current: Int64?,
            new: Int64,
            requested: Int64,
            watermarks: KafkaWatermarks
        ) {
            self.partition = partition
            self.current = current
            self.new = new
            self.requested = requested
            self.watermarks = watermarks
        }

        /// How far the offset moves (negative: back), or `nil` where the group committed none.
        public var change: Int64? { self.current.map { self.new - $0 } }

        /// Whether the requested offset lay outside the partition's range and was moved to its edge.
        public var isClamped: Bool { self.new != self.requested }
    }

    /// The consumer group.
    public var group: String
    /// How the new offsets were chosen.
    public var mode: OffsetResetMode
    /// One row per partition, in topic and partition order.
    public var rows: [Row]

    /// Plans a reset.
    ///
    /// - Parameters:
    ///   - group: The consumer group.
    ///   - mode: How to choose each new offset.
    ///   - partitions: The partitions to reset (see ``partitions(selecting:topics:committed:group:)``).
    ///   - committed: The group's committed offsets (partitions where it committed none may be absent).
    ///   - watermarks: The first retained and end offsets of every partition to reset.
    ///   - offsetsForTime: For ``OffsetResetMode/dateTime(milliseconds:)``: per partition, the first offset at or
    ///     after the time, `nil` where no message is that recent.
    ///   - sourceOffsets: For ``OffsetResetMode/fromGroup(_:)``: the other group's committed offsets.
    /// - Throws: An ``OperationsError`` when `--shift-by` meets a partition where the group committed nothing (it
    ///   has nothing to shift, and `kafka-consumer-groups` refuses too), or an input lacks a partition.
    public init(
        group: String,
        mode: OffsetResetMode,
        partitions: [KafkaTopicPartition],
        committed: [KafkaTopicPartition: Int64],
        watermarks: [KafkaTopicPartition: KafkaWatermarks],
        offsetsForTime: [KafkaTopicPartition: Int64?] = [:],
        sourceOffsets: [KafkaTopicPartition: Int64] = [:]
    ) throws(OperationsError) {
        self.group = group
        self.mode = mode
        var rows: [Row] = []
        var uncommitted: [KafkaTopicPartition] = []
        for partition in Array(Set(partitions)).sorted() {
            guard let marks = watermarks[partition] else {
                throw OperationsError(.offsetReset, "no first and end offsets of \(partition)")
            }
            let current = committed[partition]
            let requested: Int64
            switch mode {
            case .earliest:
                requested = marks.start
            case .latest:
                requested = marks.end
            case .dateTime:
                guard let found = offsetsForTime[partition] else {
                    throw OperationsError(.offsetReset, "no offset for the time on \(partition)")
                }
                requested = found ?? marks.end
            case .offset(let offset):
                requested = offset
            case .shift(let shift):
                guard let current else {
                    uncommitted.append(partition)
                    continue
                }
                let (sum, overflow) = current.addingReportingOverflow(shift)
                requested = overflow ? (shift < 0 ? .min : .max) : sum
            case .fromGroup(let source):
                guard let found = sourceOffsets[partition] else {
                    throw OperationsError(
                        .offsetReset,
                        "group '\(source)' committed no offset on \(partition): name the partitions it has with --topic"
                    )
                }
                requested = found
            }
            let new = min(max(requested, marks.start), max(marks.end, marks.start))
            rows.append(Row(partition: partition, current: current, new: new, requested: requested, watermarks: marks))
        }
        guard uncommitted.isEmpty else {
            let names = uncommitted.map(\.description).joined(separator: ", ")
            throw OperationsError(
                .offsetReset,
                "--shift-by moves a committed offset, and group '\(group)' has none on \(names): "
                    + "reset those with --to-earliest, --to-latest, --to-datetime or --to-offset"
            )
        }
        self.rows = rows
    }

    /// The offsets to commit: every partition's new offset (unchanged ones too, so the group's position is
    /// exactly the plan).
    public var offsets: [KafkaTopicPartition: Int64] {
        Dictionary(uniqueKeysWithValues: self.rows.map { ($0.partition, $0.new) })
    }

    /// The partitions a reset covers.
    ///
    /// With no selection, the partitions where the group committed an offset (as `kafka-consumer-groups
    /// --all-topics` does for a group). Otherwise each selected topic's partitions, or the ones named.
    ///
    /// - Parameters:
    ///   - selections: The `--topic` options (repetitions of a topic are merged).
    ///   - topics: The partitions of each topic of the cluster.
    ///   - committed: The group's committed offsets.
    ///   - group: The consumer group, for messages.
    /// - Throws: An ``OperationsError`` for a topic the cluster does not have, a partition its topic does not
    ///   have, or no selection while the group committed nothing.
    public static func partitions(
        selecting selections: [TopicSelection],
        topics: [String: [Int32]],
        committed: [KafkaTopicPartition: Int64],
        group: String
    ) throws(OperationsError) -> [KafkaTopicPartition] {
        guard !selections.isEmpty else {
            guard !committed.isEmpty else {
                throw OperationsError(
                    .offsetReset,
                    "group '\(group)' has committed no offsets, so there is nothing to reset without --topic: "
                        + "name the topics (--topic T, or T:0,2 for some partitions)"
                )
            }
            return committed.keys.sorted()
        }
        var partitions: [KafkaTopicPartition] = []
        for selection in TopicSelection.merged(selections) {
            guard let existing = topics[selection.topic], !existing.isEmpty else {
                throw OperationsError(.offsetReset, "--topic \(selection.topic): the cluster has no such topic")
            }
            let chosen = selection.partitions ?? existing.sorted()
            let missing = chosen.filter { !existing.contains($0) }
            guard missing.isEmpty else {
                let count = existing.count
                throw OperationsError(
                    .offsetReset,
                    "--topic \(selection): \(selection.topic) has \(count) partition\(count == 1 ? "" : "s") "
                        + "(\(existing.sorted().map(String.init).joined(separator: ","))), "
                        + "not \(missing.map(String.init).joined(separator: ","))"
                )
            }
            partitions += chosen.map { KafkaTopicPartition(topic: selection.topic, partition: $0) }
        }
        return partitions
    }

    /// Why a reset must not be applied to a group now, or `nil` when it may be.
    ///
    /// A member would go on from its own position and commit over the reset (Kafka refuses the commit anyway), so
    /// a reset needs a group without members, as `kafka-consumer-groups` requires (state `Empty` or `Dead`).
    public static func refusal(_ description: KafkaConsumerGroupDescription) -> String? {
        let active: Set<KafkaConsumerGroupState> = [.stable, .preparingRebalance, .completingRebalance]
        guard !description.members.isEmpty || active.contains(description.state) else { return nil }
        let count = description.members.count
        // Each member by its client id, or by its member id where the broker reports no client id (tansu 0.6
        // does not; Kafka's member ids begin with the client id).
        let names = Array(Set(description.members.map { $0.clientID.isEmpty ? $0.memberID : $0.clientID })).sorted()
        let who =
            count == 0
            ? "is \(description.state)"
            : "has \(count) member\(count == 1 ? "" : "s") (\(names.joined(separator: ", ")))"
        return "group '\(description.group)' \(who); stop its workers first: offsets are reset only while a group "
            + "has no members"
    }
}

// MARK: - OffsetResetPlan + JSON

extension OffsetResetPlan: Encodable {
    private enum Keys: String, CodingKey { case group, mode, partitions }

    private struct JSONRow: Encodable {
        let row: Row

        private enum Keys: String, CodingKey {
            case topic, partition
            case current = "current_offset"
            case new = "new_offset"
            case change
            case requested =
                "requested_offset"
            case start = "start_offset"
            case end = "end_offset"
            case isClamped = "clamped"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(self.row.partition.topic, forKey: .topic)
            try container.encode(self.row.partition.partition, forKey: .partition)
            try container.encode(self.row.current, forKey: .current)
            try container.encode(self.row.new, forKey: .new)
            try container.encode(self.row.change, forKey: .change)
            try container.encode(self.row.requested, forKey: .requested)
            try container.encode(self.row.watermarks.start, forKey: .start)
            try container.encode(self.row.watermarks.end, forKey: .end)
            try container.encode(self.row.isClamped, forKey: .isClamped)
        }
    }

    /// `group`, `mode` (the flag and its value) and per partition the current, new and requested offsets, the
    /// change, the partition's range and whether the new offset was kept within it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(self.group, forKey: .group)
        try container.encode(self.mode.description, forKey: .mode)
        try container.encode(self.rows.map(JSONRow.init), forKey: .partitions)
    }
}
