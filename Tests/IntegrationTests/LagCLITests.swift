import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import struct Foundation.Date
import class Foundation.JSONDecoder

#if canImport(Glibc)
import Glibc
#endif

/// `marquee lag` as a process against the real broker: its numbers equal an independent computation from
/// delivery reports and the offsets a test consumer committed; retry tiers split into due and not yet due;
/// a group without members is stopped, one holding still with due messages is stalled.
///
/// Each test has its own topic prefix (fresh stage topics) and its own group names.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct LagCLITests {
    @Test func lagEqualsAnIndependentComputationAndRetryTiersSplitIntoDueAndNotYetDue() async throws {
        let prefix = TestEnvironment.uniqueName("mql") + "."
        let topics = StageTopics(stage: "fetch", prefix: prefix, tiers: 2)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        // The main topic and tier 1; tier 2 is left missing on purpose.
        try await admin.createTopics([
            .init(name: topics.main, partitions: 3), .init(name: topics.retry(1), partitions: 1),
        ])

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let past = now - 60_000
        let future = now + 3_600_000
        // Retry tier 1, in order: 2 past (to be consumed), 2 past and 1 without a not-before (overdue), 4 future.
        let notBefores: [Int64?] = [past, past, past, past, nil, future, future, future, future]
        let retryMessages = notBefores.enumerated().map { index, notBefore in
            var envelope = Envelope.root()
            envelope.attempt = 2
            envelope.notBefore = notBefore
            return KafkaProducerMessage(
                topic: topics.retry(1),
                partition: 0,
                key: Array("r\(index)".utf8),
                value: Array("{}".utf8),
                headers: envelope.kafkaHeaders
            )
        }
        let mainMessages = (0..<60).map { KafkaProducerMessage(topic: topics.main, key: "k\($0)", value: "v\($0)") }
        let reports = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(mainMessages + retryMessages)
        }

        // Independently: end offsets from the delivery reports.
        var ends: [String: Int64] = [:]
        for report in reports {
            let key = "\(report.topic)[\(report.partition)]"
            ends[key] = max(ends[key] ?? 0, report.offset + 1)
        }
        #expect(ends.count == 4)

        // The stage's group consumes the first 4 messages of each main partition and the first 2 of tier 1.
        let group = TestEnvironment.uniqueName("mql-fetch")
        var committed: [String: Int64] = [:]
        let consumer = TestEnvironment.consumer(group: group, topics: [topics.main, topics.retry(1)])
        try await withConsumer(consumer) { consumer in
            var handedOut = 0
            for try await message in consumer.messages {
                handedOut += 1
                let limit: Int64 = message.topic == topics.main ? 4 : 2
                if message.offset < limit {
                    consumer.markProcessed(message)
                    let key = "\(message.topic)[\(message.partition)]"
                    committed[key] = max(committed[key] ?? 0, message.offset + 1)
                }
                if handedOut == reports.count { break }
            }
            try await consumer.commit()
        }
        let mainLag = (0..<3).map { ends["\(topics.main)[\($0)]"]! - committed["\(topics.main)[\($0)]"]! }.reduce(0, +)
        #expect(mainLag == 60 - 12)

        let environment = ["MARQUEE_GROUP_FETCH": group, "MARQUEE_RETRY_DELAYS": "10s,1m"]
        let run = try await runLag(
            ["--stage", "fetch", "--topic-prefix", prefix, "--samples", "2", "--interval", "300ms", "--json"],
            environment: environment
        )
        #expect(run.status == 0, "\(run.standardError)")
        let document = try LagDocument.decode(run.standardOutput)
        let stage = try #require(document.stages.first)
        #expect(document.stages.count == 1)
        #expect(stage.stage == "fetch")
        #expect(stage.group == group)
        #expect(stage.samples == 2)
        #expect(stage.missingTopics == [topics.retry(2)])

        // Every partition equals the independent computation.
        #expect(stage.partitions.count == 4)
        for partition in stage.partitions {
            let key = "\(partition.topic)[\(partition.partition)]"
            let end = try #require(ends[key])
            let expectedCommitted = try #require(committed[key])
            #expect(partition.end == end, "\(key)")
            #expect(partition.committed == expectedCommitted, "\(key)")
            #expect(partition.lag == end - expectedCommitted, "\(key)")
            // The oldest unconsumed message was produced by this test, moments ago.
            let age = try #require(partition.lagSeconds, "\(key)")
            #expect(age >= 0 && age < 120, "\(key)")
        }
        let tier = try #require(stage.partitions.first { $0.topic == topics.retry(1) })
        #expect(tier.tier == 1)
        #expect(tier.lag == 7)
        #expect(tier.overdue == 3)
        #expect(tier.notYetDue == 4)
        #expect(tier.lagDue == 3)
        #expect(stage.totals.lag == mainLag + 7)
        #expect(stage.totals.lagDue == mainLag + 3)
        #expect(stage.totals.notYetDue == 4)
        #expect(stage.totals.overdue == 3)

        // The consumer left: no member.
        #expect(stage.members == 0)
        #expect(stage.status == "STOPPED")
        #expect(stage.reason.contains("no member in group \(group)"))

        // --max-lag compares the due lag: not-yet-due retries do not count.
        let within = try await runLag(
            ["--stage", "fetch", "--topic-prefix", prefix, "--samples", "1", "--max-lag", "\(mainLag + 3)"],
            environment: environment
        )
        #expect(within.status == 0, "\(within.standardError)")
        let over = try await runLag(
            ["--stage", "fetch", "--topic-prefix", prefix, "--samples", "1", "--max-lag", "\(mainLag + 2)", "--json"],
            environment: environment
        )
        #expect(over.status == 1)
        #expect(
            over.standardError.contains("due lag above --max-lag \(mainLag + 2): fetch \(mainLag + 3)"),
            "\(over.standardError)"
        )
        #expect(try LagDocument.decode(over.standardOutput).maxLagExceeded)

        // The table: the status, the reason, the missing topic, the due/not-due columns. --group overrides.
        let table = try await runLag(
            ["--stage", "fetch", "--topic-prefix", prefix, "--samples", "1", "--group", group],
            environment: ["MARQUEE_GROUP_FETCH": "not-this-one", "MARQUEE_RETRY_DELAYS": "10s,1m"]
        )
        #expect(table.status == 0, "\(table.standardError)")
        #expect(
            table.standardOutput.contains("fetch — group \(group), 0 members (Empty): STOPPED"),
            "\(table.standardOutput)"
        )
        #expect(table.standardOutput.contains("OVERDUE"))
        #expect(table.standardOutput.contains("note: \(topics.retry(2)) does not exist yet (no lag)"))
        #expect(table.standardOutput.contains("total (due \(mainLag + 3))"))
    }

    @Test func aMemberHoldingStillWithDueMessagesIsStalled() async throws {
        let prefix = TestEnvironment.uniqueName("mqs") + "."
        let topics = StageTopics(stage: "images", prefix: prefix, tiers: 1)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([topics], partitions: 1, admin: admin)
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(
                (0..<10).map { KafkaProducerMessage(topic: topics.main, key: "k\($0)", value: "v\($0)") }
            )
        }
        let group = TestEnvironment.uniqueName("mqs-images")
        // The member processes 3 messages, commits them, then holds the rest without committing: still a
        // member (librdkafka heartbeats in the background), but its committed offset does not move.
        try await withConsumer(TestEnvironment.consumer(group: group, topics: [topics.main])) { consumer in
            var handedOut = 0
            for try await message in consumer.messages {
                handedOut += 1
                if message.offset < 3 { consumer.markProcessed(message) }
                if handedOut == 10 { break }
            }
            try await consumer.commit()

            let run = try await runLag([
                "--stage", "images", "--group", "images=\(group)", "--topic-prefix", prefix,
                "--samples", "3", "--interval", "500ms", "--json",
            ])
            #expect(run.status == 0, "\(run.standardError)")
            let stage = try #require(try LagDocument.decode(run.standardOutput).stages.first)
            #expect(stage.members == 1)
            #expect(stage.status == "STALLED", "\(stage.reason)")
            #expect(stage.reason.contains("\(topics.main)[0] at 3 (lag 7)"), "\(stage.reason)")
            let partition = try #require(stage.partitions.first { $0.topic == topics.main })
            #expect(partition.committed == 3 && partition.end == 10 && partition.lag == 7)
            #expect(partition.status == "STALLED")
            #expect(partition.rate == 0)
            #expect(partition.drainSeconds == nil)
            // The empty retry tier is nobody's problem.
            #expect(stage.partitions.first { $0.topic == topics.retry(1) }?.status == "OK")

            // The admin calls underneath: a member is described, a group nobody knows has none.
            let unknown = TestEnvironment.uniqueName("mqs-unknown")
            let groups = try await admin.describeGroups([group, unknown, group])
            #expect(groups.count == 2)
            #expect(groups[group]?.members.count == 1)
            #expect(groups[unknown]?.members.isEmpty == true)
            #expect(groups[unknown].map { [.dead, .empty].contains($0.state) } == true)
            #expect(try await admin.listGroups().contains { $0.group == group })
            let main = KafkaTopicPartition(topic: topics.main, partition: 0)
            #expect(try await admin.committedOffsets(group: group, partitions: [main]) == [main: 3])
            let marks = try await admin.watermarks(partitions: [main])
            #expect(marks[main]?.start == 0 && marks[main]?.end == 10)
        }
    }

    @Test func theSamplerFollowsNewMessagesAndCommitsAcrossRounds() async throws {
        let prefix = TestEnvironment.uniqueName("mqr") + "."
        let topics = StageTopics(stage: "records", prefix: prefix, tiers: 1)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        try await admin.createTopics([
            .init(name: topics.main, partitions: 1), .init(name: topics.retry(1), partitions: 1),
        ])
        let group = TestEnvironment.uniqueName("mqr-records")
        var sampler = LagSampler(
            admin: admin,
            reader: try KafkaReader(configuration: TestEnvironment.kafka, logger: .marqueeTest),
            targets: [
                LagTarget(
                    stage: "records",
                    group: group,
                    topics: [.init(name: topics.main), .init(name: topics.retry(1), tier: 1)]
                )
            ]
        )
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func retry(_ notBefore: Int64) -> KafkaProducerMessage {
            var envelope = Envelope.root()
            envelope.notBefore = notBefore
            return KafkaProducerMessage(
                topic: topics.retry(1),
                partition: 0,
                value: Array("{}".utf8),
                headers: envelope.kafkaHeaders
            )
        }
        func samples(_ observations: [GroupObservation]) throws -> (main: LagSample, retry: LagSample) {
            let partitions = try #require(observations.first).partitions
            return (
                try #require(partitions.first { $0.partition.topic == topics.main }),
                try #require(partitions.first { $0.partition.topic == topics.retry(1) })
            )
        }
        let hour: Int64 = 3_600_000

        // Round 1: two overdue and one not yet due.
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) {
            try await $0.send([retry(now - hour), retry(now - hour), retry(now + hour)])
        }
        let first = try samples(try await sampler.sample())
        #expect(first.main.lag == 0 && first.main.committed == nil)
        #expect(first.retry.lag == 3)
        #expect(
            first.retry.retry
                == RetryBacklog(notYetDue: 1, overdue: 2, unscanned: 0, headNotBefore: now - hour, isHeadDue: true)
        )
        #expect(first.retry.oldestUnconsumedTimestamp != nil)

        // Round 2: more of each arrived; only they are read, and the counts add up.
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(
                [retry(now - hour), retry(now + hour)]
                    + (0..<5).map { KafkaProducerMessage(topic: topics.main, value: "m\($0)") }
            )
        }
        let second = try samples(try await sampler.sample())
        #expect(second.main.lag == 5)
        #expect(second.main.oldestUnconsumedTimestamp != nil)
        #expect(second.retry.lag == 5)
        #expect(second.retry.retry?.overdue == 3 && second.retry.retry?.notYetDue == 2)

        // Round 3: the group committed the first two retries; the head is now the one not yet due.
        try await withConsumer(TestEnvironment.consumer(group: group, topics: [topics.retry(1)])) { consumer in
            var handedOut = 0
            for try await message in consumer.messages {
                handedOut += 1
                if message.offset < 2 { consumer.markProcessed(message) }
                if handedOut == 5 { break }
            }
            try await consumer.commit()
        }
        let third = try samples(try await sampler.sample())
        #expect(third.retry.committed == 2)
        #expect(third.retry.lag == 3)
        #expect(
            third.retry.retry
                == RetryBacklog(notYetDue: 2, overdue: 1, unscanned: 0, headNotBefore: now + hour, isHeadDue: false)
        )
        #expect(!third.retry.hasDueWork)

        // A scan limit of 1 reads only the head; the rest is unscanned.
        sampler.scanLimit = 1
        let limited = try samples(try await sampler.sample())
        #expect(
            limited.retry.retry
                == RetryBacklog(notYetDue: 1, overdue: 0, unscanned: 2, headNotBefore: now + hour, isHeadDue: false)
        )
    }

    @Test func anUnreachableBrokerExits69WithOneLine() async throws {
        let run = try await runBuiltExecutable(
            "marquee",
            ["lag", "--brokers", "127.0.0.1:1", "--timeout", "2", "--samples", "1"]
        )
        #expect(run.status == 69)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(run.standardError)")
        #expect(run.standardError.hasPrefix("marquee: no broker answered within"), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func stagesWhoseTopicsDoNotExistYetHaveNoLag() async throws {
        let prefix = TestEnvironment.uniqueName("mqn") + "."
        let run = try await runLag(["--topic-prefix", prefix, "--samples", "1", "--json", "--max-lag", "0"])
        #expect(run.status == 0, "\(run.standardError)")
        let document = try LagDocument.decode(run.standardOutput)
        #expect(document.stages.map(\.stage) == ["fetch", "images", "records"])
        for stage in document.stages {
            #expect(stage.partitions.isEmpty)
            #expect(stage.totals.lag == 0)
            #expect(stage.missingTopics.count == 4)
        }
    }
}

/// Runs the built `marquee lag` against the test broker.
private func runLag(_ arguments: [String], environment: [String: String?] = [:]) async throws -> CommandRun {
    try await runBuiltExecutable(
        "marquee",
        ["lag", "--brokers", TestEnvironment.brokers] + arguments,
        environment: environment
    )
}

/// The documented JSON shape of `marquee lag --json` (docs/lag.md), decoded strictly enough to catch a renamed
/// field.
private struct LagDocument: Decodable {
    struct Stage: Decodable {
        var stage: String
        var group: String
        var status: String
        var reason: String
        var members: Int
        var groupState: String
        var samples: Int
        var windowSeconds: Double
        var maxLagExceeded: Bool
        var totals: Totals
        var partitions: [Partition]
        var missingTopics: [String]
        var notes: [String]
    }

    struct Totals: Decodable {
        var lag: Int64
        var lagDue: Int64
        var notYetDue: Int64
        var overdue: Int64
        var unscanned: Int64
        var lagSeconds: Double?
        var rate: Double?
        var drainSeconds: Double?
    }

    struct Partition: Decodable {
        var topic: String
        var partition: Int32
        var tier: Int?
        var committed: Int64?
        var start: Int64
        var end: Int64
        var lag: Int64
        var lagDue: Int64
        var lagSeconds: Double?
        var oldestTimestampMs: Int64?
        var rate: Double?
        var drainSeconds: Double?
        var status: String
        var notYetDue: Int64?
        var overdue: Int64?
        var unscanned: Int64?
    }

    var time: String
    var timeMs: Int64
    var maxLag: Int64?
    var maxLagExceeded: Bool
    var stages: [Stage]

    static func decode(_ text: String) throws -> LagDocument {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(LagDocument.self, from: Data(text.utf8))
    }
}

/// `marquee lag --serve`: the lag exporter, seeing the group from the broker whether or not it has members.
extension LagCLITests {
    @Test func serveExposesAGroupFromTheBrokerAndAnIdleGroupWithoutMembersIsOK() async throws {
        let prefix = TestEnvironment.uniqueName("mqls") + "."
        let topic = prefix + "fetch"
        let group = prefix + "fetch"
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        try await admin.createTopics([.init(name: topic, partitions: 1)])
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(
                (0..<4).map {
                    KafkaProducerMessage(topic: topic, partition: 0, key: Array("k\($0)".utf8), value: Array("{}".utf8))
                }
            )
        }

        let serving = AsyncStream<Int>.makeStream()
        let process = try ChildProcess(
            "marquee",
            arguments: [
                "lag", "--serve", "127.0.0.1:0", "--stage", "fetch", "--topic-prefix", prefix, "--interval", "300ms",
                "--samples", "2", "--brokers", TestEnvironment.brokers,
            ],
            environment: ["MARQUEE_CONFIG": "", "MARQUEE_GROUP_FETCH": "", "MARQUEE_RETRY_DELAYS": "10s"],
            readsStandardError: true
        ) { line in
            if let range = line.range(of: "serving http://127.0.0.1:"),
                let port = Int(line[range.upperBound...].prefix { $0.isNumber })
            {
                serving.continuation.yield(port)
            }
        }
        var ports = serving.stream.makeAsyncIterator()
        let port = try #require(await ports.next(), "marquee lag --serve says where it serves")
        let metrics = "http://127.0.0.1:\(port)/metrics"
        let labels = #"group="\#(group)",stage="fetch""#

        // Four messages due and no member: STOPPED, with kafka-lag-exporter's per-partition lag.
        let stopped = try await Self.scrape(metrics, until: #"marquee_lag_group_status{\#(labels),status="STOPPED"} 1"#)
        #expect(
            stopped.contains(#"kafka_consumergroup_group_lag{\#(labels),topic="\#(topic)",partition="0"} 4"#),
            "\(stopped)"
        )
        #expect(stopped.contains(#"marquee_lag_due{\#(labels)} 4"#))
        #expect(stopped.contains(#"marquee_lag_members{\#(labels)} 0"#))
        #expect(try await httpGet("http://127.0.0.1:\(port)/readyz").0 == 200)

        // The group caught up (its offsets committed to the end), still without members: OK, not STOPPED.
        try await admin.commitOffsets(group: group, [KafkaTopicPartition(topic: topic, partition: 0): 4])
        let idle = try await Self.scrape(metrics, until: #"marquee_lag_group_status{\#(labels),status="OK"} 1"#)
        #expect(idle.contains(#"marquee_lag_group_status{\#(labels),status="STOPPED"} 0"#), "\(idle)")
        #expect(idle.contains(#"kafka_consumergroup_group_lag{\#(labels),topic="\#(topic)",partition="0"} 0"#))

        process.signal(SIGTERM)
        #expect(await process.waitForExit(killingAfter: .seconds(30)) == 0)
    }

    /// Scrapes `url` until its exposition holds `line` (30 s at most), and returns it.
    static func scrape(_ url: String, until line: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        var last = ""
        while ContinuousClock.now < deadline {
            let (status, body) = try await httpGet(url)
            if status == 200 {
                last = body
                if body.split(separator: "\n").contains(where: { $0 == line }) { return body }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("no '\(line)' within 30 s; last exposition:\n\(last)")
        return last
    }
}
