import MarqueeKafka
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import struct Foundation.Date
import class Foundation.JSONDecoder

/// `marquee groups` as a process against the real broker: each mode of `reset-offsets` plans without changing
/// anything and, with `--execute`, leaves exactly the planned offsets committed; `--execute` refuses while the
/// group has a member; `list` and `describe` show a live member, its client id, its partitions and the lag.
///
/// Each test has its own topic and group. Groups that only have offsets committed for them (no member) are made
/// with the admin client, so most tests wait for no group join.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct GroupsCLITests {
    // MARK: reset-offsets, mode by mode

    @Test func toEarliestWithoutTopicResetsEveryPartitionTheGroupCommittedOn() async throws {
        let fixture = try await Fixture.make(messages: [10, 10, 10], committed: [0: 7, 1: 4])
        // Without --topic only the committed partitions (0 and 1) are planned; partition 2 is left alone.
        let plan = try await fixture.plan(["--to-earliest"])
        #expect(plan.mode == "--to-earliest")
        #expect(plan.rows == [.init(0, current: 7, new: 0), .init(1, current: 4, new: 0)])
        try await fixture.expectCommitted([0: 7, 1: 4, 2: nil])

        let text = try await fixture.groups(["reset-offsets", fixture.group, "--to-earliest"])
        #expect(text.standardOutput.hasPrefix("No --topic: every partition group '\(fixture.group)' committed on."))
        let run = try await fixture.execute(["--to-earliest"])
        #expect(
            run.standardOutput.contains("Applied: group '\(fixture.group)' reset on 2 partitions."),
            "\(run.standardOutput)"
        )
        try await fixture.expectCommitted([0: 0, 1: 0, 2: nil])
    }

    @Test func toLatestWithTopicCoversEveryPartitionOfIt() async throws {
        let fixture = try await Fixture.make(messages: [10, 6, 3], committed: [0: 2, 1: 6])
        let plan = try await fixture.plan(["--to-latest", "--topic", fixture.topic])
        // Partition 2 has no committed offset: it is planned too, from none to its end offset.
        #expect(
            plan.rows == [.init(0, current: 2, new: 10), .init(1, current: 6, new: 6), .init(2, current: nil, new: 3)]
        )
        try await fixture.expectCommitted([0: 2, 1: 6, 2: nil])

        // The text plan, in kafka-consumer-groups' columns, and the promise that nothing changed.
        let text = try await fixture.groups(["reset-offsets", fixture.group, "--to-latest", "--topic", fixture.topic])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("GROUP"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("CURRENT-OFFSET  NEW-OFFSET  CHANGE"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("Nothing changed; add --execute to apply."))
        try await fixture.expectCommitted([0: 2, 1: 6, 2: nil])

        _ = try await fixture.execute(["--to-latest", "--topic", fixture.topic])
        try await fixture.expectCommitted([0: 10, 1: 6, 2: 3])
    }

    @Test func toOffsetOnAPartitionSubsetIsKeptWithinTheRange() async throws {
        let fixture = try await Fixture.make(messages: [10, 10, 4], committed: [0: 1, 1: 1, 2: 1])
        let subset = "\(fixture.topic):0,2"
        let plan = try await fixture.plan(["--to-offset", "6", "--topic", subset])
        // Partition 1 is not named; partition 2 ends at 4, so 6 becomes 4 there.
        #expect(plan.rows == [.init(0, current: 1, new: 6), .init(2, current: 1, new: 4)])
        #expect(plan.partitions.map(\.clamped) == [false, true])
        #expect(plan.partitions.map(\.requestedOffset) == [6, 6])
        try await fixture.expectCommitted([0: 1, 1: 1, 2: 1])

        _ = try await fixture.execute(["--to-offset", "6", "--topic", subset])
        try await fixture.expectCommitted([0: 6, 1: 1, 2: 4])
    }

    @Test func shiftByMovesEachCommittedOffsetBackOrForward() async throws {
        let fixture = try await Fixture.make(messages: [10, 10, 10], committed: [0: 7, 1: 2, 2: 10])
        // A negative value after a space, as kafka-consumer-groups takes it.
        let back = try await fixture.plan(["--shift-by", "-3"])
        #expect(
            back.rows == [.init(0, current: 7, new: 4), .init(1, current: 2, new: 0), .init(2, current: 10, new: 7)]
        )
        #expect(back.partitions.map(\.change) == [-3, -2, -3])
        try await fixture.expectCommitted([0: 7, 1: 2, 2: 10])

        _ = try await fixture.execute(["--shift-by", "-3"])
        try await fixture.expectCommitted([0: 4, 1: 0, 2: 7])

        let forward = try await fixture.plan(["--shift-by", "5", "--topic", "\(fixture.topic):1,2"])
        #expect(forward.rows == [.init(1, current: 0, new: 5), .init(2, current: 7, new: 10)])
        _ = try await fixture.execute(["--shift-by", "5", "--topic", "\(fixture.topic):1,2"])
        try await fixture.expectCommitted([0: 4, 1: 5, 2: 10])
    }

    /// A renamed group takes the old one's place: the migration of the stages' groups to `<prefix><stage>`.
    @Test func fromGroupCopiesAnotherGroupsOffsets() async throws {
        let old = try await Fixture.make(messages: [10, 10, 10], committed: [0: 7, 1: 3])
        var renamed = old
        renamed.group = TestEnvironment.uniqueName("groups-renamed")
        // Without --topic: the partitions the old group committed on (partition 2 has nothing to copy).
        let plan = try await renamed.plan(["--from-group", old.group])
        #expect(plan.mode == "--from-group \(old.group)")
        #expect(plan.rows == [.init(0, current: nil, new: 7), .init(1, current: nil, new: 3)])
        try await renamed.expectCommitted([0: nil, 1: nil, 2: nil])

        let text = try await renamed.groups(["reset-offsets", renamed.group, "--from-group", old.group])
        #expect(
            text.standardOutput.hasPrefix("No --topic: every partition group '\(old.group)' committed on."),
            "\(text.standardOutput)"
        )
        _ = try await renamed.execute(["--from-group", old.group])
        try await renamed.expectCommitted([0: 7, 1: 3, 2: nil])
        try await old.expectCommitted([0: 7, 1: 3, 2: nil])

        // A partition the old group never committed on is named, not guessed.
        let missing = try await renamed.groups([
            "reset-offsets", renamed.group, "--from-group", old.group, "--topic", old.topic,
        ])
        #expect(missing.status == 64, "\(missing.standardError)")
        #expect(missing.standardError.contains("committed no offset on \(old.topic)[2]"), "\(missing.standardError)")
    }

    @Test func toDatetimeFindsTheFirstMessageFromThatTime() async throws {
        // Partition 0: three messages, then (once the clock has moved past `cut`) two more. Partition 1: two
        // messages, all before `cut`.
        let fixture = try await Fixture.make(messages: [3, 2], committed: [0: 5, 1: 2])
        let cut = Date().timeIntervalSince1970 * 1000 + 1
        // Wait for the clock itself: the next messages' create time must be later than `cut`.
        while Date().timeIntervalSince1970 * 1000 <= cut + 1 { try await Task.sleep(for: .milliseconds(2)) }
        try await fixture.produce([2, 0])
        let time = Self.iso8601(milliseconds: Int64(cut))
        let ends: [Int32: Int64] = [0: 5, 1: 2]

        let plan = try await fixture.plan(["--to-datetime", time, "--topic", "\(fixture.topic):0"])
        #expect(plan.mode == "--to-datetime \(time)")
        #expect(plan.rows == [.init(0, current: 5, new: 3)], "the first message at or after \(time) is offset 3")
        try await fixture.expectCommitted([0: 5, 1: 2])

        // The same instant in another zone plans the same.
        let tokyo = try await fixture.plan([
            "--to-datetime", Self.iso8601(milliseconds: Int64(cut), zone: "+09:00"), "--topic", "\(fixture.topic):0",
        ])
        #expect(tokyo.rows == plan.rows)

        _ = try await fixture.execute(["--to-datetime", time, "--topic", "\(fixture.topic):0"])
        try await fixture.expectCommitted([0: 3, 1: 2])

        // Partition 1 has no message from `cut` on: Kafka answers "none", and the reset goes to the end offset.
        // The test broker (tansu 0.6) answers offset 0 for a time after a partition's last message instead
        // (measured; see KafkaAdmin.offsets(atOrAfter:partitions:)).
        let none = try await fixture.plan(["--to-datetime", time, "--topic", "\(fixture.topic):1"])
        withKnownIssue(
            "tansu answers ListOffsets for a time after the last message with 0, not -1",
            isIntermittent: true
        ) {
            #expect(none.rows == [.init(1, current: 2, new: ends[1]!)])
        }
    }

    // MARK: Refusing while the group has members

    @Test func executeRefusesWhileAConsumerIsAMember() async throws {
        let fixture = try await Fixture.make(messages: [4, 4], committed: [:])
        let clientID = TestEnvironment.uniqueName("groups-worker")
        try await fixture.withMember(clientID: clientID) {
            try await fixture.expectCommitted([0: 4, 1: 4])
            let refused = try await fixture.groups(
                ["reset-offsets", fixture.group, "--to-earliest", "--execute"]
            )
            #expect(refused.status == 75, "\(refused.standardOutput) \(refused.standardError)")
            #expect(refused.standardError.contains("group '\(fixture.group)' has 1 member"), "\(refused.standardError)")
            // The member by its client id (or, where the broker gives none, its member id, which begins with it).
            #expect(refused.standardError.contains(clientID), "\(refused.standardError)")
            #expect(refused.standardError.contains("stop its workers first"))
            try await fixture.expectCommitted([0: 4, 1: 4])

            // The plan is still shown, with a note that --execute would refuse.
            let plan = try await fixture.groups(["reset-offsets", fixture.group, "--to-earliest"])
            #expect(plan.status == 0, "\(plan.standardError)")
            #expect(plan.standardOutput.contains("--execute would refuse now"), "\(plan.standardOutput)")
        }
        // Once the member left, the same command applies.
        try await fixture.awaitNoMembers()
        _ = try await fixture.execute(["--to-earliest"])
        try await fixture.expectCommitted([0: 0, 1: 0])

        // A consumer joining the group afterwards starts from the reset offsets: it reads every message again.
        var first: [Int32: Int64] = [:]
        try await withConsumer(TestEnvironment.consumer(group: fixture.group, topics: [fixture.topic])) { consumer in
            for try await message in consumer.messages {
                if first[message.partition] == nil { first[message.partition] = message.offset }
                if first.count == 2 { break }
            }
        }
        #expect(first == [0: 0, 1: 0])
    }

    // MARK: list and describe

    @Test func listAndDescribeShowALiveMemberItsPartitionsAndTheLag() async throws {
        let fixture = try await Fixture.make(messages: [6, 3], committed: [:])
        let clientID = TestEnvironment.uniqueName("groups-describe")
        // The member consumes everything and commits 2 messages fewer on partition 0.
        try await fixture.withMember(clientID: clientID, committing: [0: 4, 1: 3]) {
            let list = try await fixture.groups(["list", "--json"])
            #expect(list.status == 0, "\(list.standardError)")
            let listings = try JSONDecoder().decode([ListedGroup].self, from: Data(list.standardOutput.utf8))
            let listed = try #require(listings.first { $0.group == fixture.group }, "\(list.standardOutput)")
            #expect(listed.simple == false)
            let table = try await fixture.groups(["list"])
            #expect(table.standardOutput.contains(fixture.group))

            let describe = try await fixture.groups(["describe", fixture.group, "--json"])
            #expect(describe.status == 0, "\(describe.standardError)")
            let report = try GroupDocument.decode(describe.standardOutput)
            #expect(report.group == fixture.group)
            #expect(report.state == "Stable")
            let member = try #require(report.members.first)
            #expect(report.members.count == 1)
            // The member id the coordinator gave: Kafka's (and tansu's) begin with the member's client id.
            #expect(member.memberId.hasPrefix(clientID + "-"), "\(member.memberId)")
            #expect(report.partitions.map(\.partition) == [0, 1])
            #expect(report.partitions.map(\.committedOffset) == [4, 3])
            #expect(report.partitions.map(\.endOffset) == [6, 3])
            #expect(report.partitions.map(\.lag) == [2, 0])
            #expect(report.totalLag == 2)

            let text = try await fixture.groups(["describe", fixture.group])
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("Consumer group '\(fixture.group)': state Stable, 1 member"))
            #expect(text.standardOutput.contains(member.memberId))
            #expect(text.standardOutput.contains("Total lag: 2"))

            // Apache Kafka's DescribeGroups answer names each member's client id and host and carries its
            // assignment. tansu 0.6 answers with all three empty (measured on the wire: client_id '', client_host
            // '', member_assignment of 0 bytes, for a Stable group), so these hold against Kafka only.
            withKnownIssue("tansu 0.6 reports no client id, host or assignment for a member", isIntermittent: true) {
                #expect(member.clientId == clientID)
                #expect(!member.host.isEmpty)
                #expect(member.assignment.map(\.partition).sorted() == [0, 1])
                #expect(member.assignment.allSatisfy { $0.topic == fixture.topic })
                #expect(report.partitions.allSatisfy { $0.clientId == clientID && $0.memberId == member.memberId })
                #expect(text.standardOutput.contains("\(fixture.topic):0,1"), "\(text.standardOutput)")
            }
        }
    }

    @Test func describingAGroupNobodyKnowsSaysSo() async throws {
        let group = TestEnvironment.uniqueName("groups-nobody")
        let run = try await runGroups(["describe", group])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(
            run.standardOutput.contains("Consumer group '\(group)' has no members and no committed offsets"),
            "\(run.standardOutput)"
        )
        let json = try GroupDocument.decode(try await runGroups(["describe", group, "--json"]).standardOutput)
        #expect(json.members.isEmpty && json.partitions.isEmpty)
        #expect(["Dead", "Empty"].contains(json.state))
    }

    // MARK: Mistakes and failures

    @Test func badArgumentsAndNothingToResetExit64() async throws {
        let fixture = try await Fixture.make(messages: [1], committed: [:])
        for (arguments, message) in [
            (["--topic", fixture.topic], "name how to reset"),
            (["--to-earliest", "--to-latest"], "not --to-earliest and --to-latest"),
            (["--to-datetime", "2026-11-27 06:00"], "is not an ISO 8601 time"),
            (["--to-earliest", "--topic", "\(fixture.topic):x"], "is not a partition number"),
            (["--to-earliest", "--topic", "\(fixture.topic):3"], "has 1 partition (0), not 3"),
            (["--to-earliest", "--topic", TestEnvironment.uniqueName("groups-missing")], "no such topic"),
            (["--to-earliest"], "has committed no offsets"),
            (["--shift-by", "1", "--topic", fixture.topic], "--shift-by moves a committed offset"),
        ] {
            let run = try await fixture.groups(["reset-offsets", fixture.group] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains(message), "\(arguments): \(run.standardError)")
        }
    }

    @Test func noBrokerExits69() async throws {
        let run = try await runBuiltExecutable(
            "marquee",
            ["groups", "list", "--brokers", "127.0.0.1:1", "--timeout", "2"]
        )
        #expect(run.status == 69, "\(run.standardError)")
    }

    static func iso8601(milliseconds: Int64, zone: String = "Z") -> String {
        var offsetSeconds: Int64 = 0
        if zone != "Z" {
            let sign: Int64 = zone.hasPrefix("-") ? -1 : 1
            let parts = zone.dropFirst().split(separator: ":").compactMap { Int64($0) }
            offsetSeconds = sign * (parts[0] * 3600 + parts[1] * 60)
        }
        let local = Date(timeIntervalSince1970: Double(milliseconds) / 1000 + Double(offsetSeconds))
        var text = local.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        if zone != "Z" { text = String(text.dropLast()) + zone }
        return text
    }
}

// MARK: - Fixture

/// A topic with messages on each partition and a group with offsets committed for it.
private struct Fixture {
    var topic: String
    var group: String
    var admin: KafkaAdmin

    /// - Parameters:
    ///   - messages: How many messages each partition gets (one partition per element).
    ///   - committed: The group's committed offset per partition (committed without joining the group).
    static func make(messages: [Int], committed: [Int32: Int64]) async throws -> Fixture {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let topic = TestEnvironment.uniqueName("groups-test")
        try await admin.createTopics([.init(name: topic, partitions: messages.count)])
        let fixture = Fixture(topic: topic, group: TestEnvironment.uniqueName("groups-group"), admin: admin)
        try await fixture.produce(messages)
        if !committed.isEmpty {
            try await admin.commitOffsets(
                group: fixture.group,
                Dictionary(uniqueKeysWithValues: committed.map { (fixture.partition($0.key), $0.value) })
            )
        }
        return fixture
    }

    func partition(_ number: Int32) -> KafkaTopicPartition { KafkaTopicPartition(topic: self.topic, partition: number) }

    /// Produces `counts[p]` messages to each partition `p`, one record per batch (exact end offsets on the test
    /// broker).
    func produce(_ counts: [Int]) async throws {
        let messages = counts.enumerated().flatMap { partition, count in
            (0..<count).map {
                KafkaProducerMessage(topic: self.topic, partition: Int32(partition), value: Array("m\($0)".utf8))
            }
        }
        guard !messages.isEmpty else { return }
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { try await $0.send(messages) }
    }

    /// `marquee groups <arguments> --brokers …`.
    func groups(_ arguments: [String]) async throws -> CommandRun {
        try await runGroups(arguments)
    }

    /// The plan `reset-offsets --json` prints (without --execute), checked to have changed nothing.
    func plan(_ arguments: [String]) async throws -> PlanDocument {
        let run = try await self.groups(["reset-offsets", self.group, "--json"] + arguments)
        #expect(run.status == 0, "\(arguments): \(run.standardError)")
        let plan = try PlanDocument.decode(run.standardOutput)
        #expect(plan.group == self.group)
        #expect(plan.executed == false)
        #expect(plan.partitions.allSatisfy { $0.topic == self.topic })
        return plan
    }

    /// Runs `reset-offsets … --execute` and expects success; its JSON twin must then match what the broker holds.
    @discardableResult
    func execute(_ arguments: [String]) async throws -> CommandRun {
        let planned = try await self.plan(arguments)
        let run = try await self.groups(["reset-offsets", self.group, "--execute"] + arguments)
        #expect(run.status == 0, "\(arguments): \(run.standardError)")
        let now = try await self.admin.committedOffsets(
            group: self.group,
            partitions: planned.partitions.map { self.partition($0.partition) }
        )
        for row in planned.partitions {
            #expect(now[self.partition(row.partition)] == .some(row.newOffset), "\(arguments): \(row.partition)")
        }
        return run
    }

    /// Expects the group's committed offsets on the topic to be these (`nil`: none).
    func expectCommitted(_ expected: [Int32: Int64?], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let offsets = try await self.admin.committedOffsets(group: self.group, topics: [self.topic])
        let byNumber = Dictionary(uniqueKeysWithValues: offsets.map { ($0.key.partition, $0.value) })
        #expect(byNumber == expected, sourceLocation: sourceLocation)
    }

    /// Runs `body` while a consumer with this client id is a member of the group and has consumed every message;
    /// it commits `committing` (or everything it read) first.
    func withMember(
        clientID: String,
        committing: [Int32: Int64]? = nil,
        _ body: () async throws -> Void
    ) async throws {
        let partitions = try await self.admin.watermarks(topic: self.topic)
        let total = partitions.values.map { Int($0.end - $0.start) }.reduce(0, +)
        var configuration = TestEnvironment.consumer(group: self.group, topics: [self.topic])
        configuration.kafka.clientID = clientID
        try await withConsumer(configuration) { consumer in
            var read = 0
            for try await message in consumer.messages {
                if let committing {
                    if message.offset < committing[message.partition] ?? 0 { consumer.markProcessed(message) }
                } else {
                    consumer.markProcessed(message)
                }
                read += 1
                if read == total { break }
            }
            try await consumer.commit()
            try await self.awaitStable(members: 1)
            try await body()
        }
    }

    /// Polls the coordinator until the group is Stable with this many members.
    func awaitStable(members: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let description = try await self.admin.describeGroups([self.group])[self.group]
            if description?.state == .stable && description?.members.count == members { return }
            guard ContinuousClock.now < deadline else {
                Issue.record(
                    "group \(self.group) not stable with \(members) members: \(String(describing: description))"
                )
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Polls the coordinator until the group has no members.
    func awaitNoMembers() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await self.admin.describeGroups([self.group])[self.group]?.members.isEmpty == false {
            guard ContinuousClock.now < deadline else {
                Issue.record("group \(self.group) still has members")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

private func runGroups(_ arguments: [String]) async throws -> CommandRun {
    try await runBuiltExecutable("marquee", ["groups"] + arguments + ["--brokers", TestEnvironment.brokers])
}

// MARK: - The documented JSON (docs/groups.md)

private struct PlanDocument: Decodable {
    struct Partition: Decodable {
        var topic: String
        var partition: Int32
        var currentOffset: Int64?
        var newOffset: Int64
        var requestedOffset: Int64
        var change: Int64?
        var startOffset: Int64
        var endOffset: Int64
        var clamped: Bool
    }

    /// A row as the tests state it: partition, current offset, new offset.
    struct Row: Equatable, CustomStringConvertible {
        var partition: Int32
        var current: Int64?
        var new: Int64

        init(_ partition: Int32, current: Int64?, new: Int64) {
            self.partition = partition
            self.current = current
            self.new = new
        }

        var description: String { "\(self.partition): \(self.current.map(String.init) ?? "-") -> \(self.new)" }
    }

    var group: String
    var mode: String
    var executed: Bool
    var partitions: [Partition]

    var rows: [Row] { self.partitions.map { Row($0.partition, current: $0.currentOffset, new: $0.newOffset) } }

    static func decode(_ text: String) throws -> PlanDocument {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(PlanDocument.self, from: Data(text.utf8))
    }
}

private struct ListedGroup: Decodable {
    var group: String
    var state: String
    var simple: Bool
}

private struct GroupDocument: Decodable {
    struct Member: Decodable {
        var memberId: String
        var clientId: String
        var host: String
        var assignment: [TopicPartition]
    }

    struct TopicPartition: Decodable {
        var topic: String
        var partition: Int32
    }

    struct Partition: Decodable {
        var topic: String
        var partition: Int32
        var committedOffset: Int64?
        var endOffset: Int64?
        var lag: Int64?
        var memberId: String?
        var clientId: String?
        var host: String?
    }

    var group: String
    var state: String
    var members: [Member]
    var partitions: [Partition]
    var totalLag: Int64

    static func decode(_ text: String) throws -> GroupDocument {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(GroupDocument.self, from: Data(text.utf8))
    }
}
