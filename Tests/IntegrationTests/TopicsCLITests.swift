import MarqueeKafka
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization

/// `marquee topics create|list` against the real broker.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct TopicsCLITests {
    @Test func createMakesEveryStageTopicOnceAndListShowsPartitionsAndEndOffsets() async throws {
        let prefix = TestEnvironment.uniqueName("mqt") + "."
        let environment: [String: String?] = [
            "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_TOPIC_PARTITIONS": "3",
            "MARQUEE_RETRY_DELAYS": "1s,1m", "MARQUEE_CONFIG": nil,
        ]
        let expected = ["fetch", "images", "records"].flatMap { stage in
            ["", ".retry.1", ".retry.2", ".dlq"].map { "\(prefix)\(stage)\($0)" }
        }
        let first = try await runBuiltExecutable("marquee", ["topics", "create"], environment: environment)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.split(separator: "\n").map(String.init) == expected.map { "\($0): created" })
        let again = try await runBuiltExecutable("marquee", ["topics", "create"], environment: environment)
        #expect(again.standardOutput.split(separator: "\n").map(String.init) == expected.map { "\($0): exists" })

        // Messages on two partitions of the fetch topic: the end offsets the listing must show.
        let reports = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(
                (0..<7).map {
                    KafkaProducerMessage(topic: "\(prefix)fetch", partition: Int32($0 % 2), value: Array("m\($0)".utf8))
                }
            )
        }
        #expect(reports.count == 7)

        let listed = try await runBuiltExecutable(
            "marquee",
            ["topics", "list", "--pipeline-only", "--json"],
            environment: environment
        )
        #expect(listed.status == 0, "\(listed.standardError)")
        let topics = try #require(
            try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]]
        )
        #expect(Set(topics.compactMap { $0["name"] as? String }) == Set(expected))
        let fetch = try #require(topics.first { $0["name"] as? String == "\(prefix)fetch" })
        #expect(fetch["stage"] as? String == "fetch")
        #expect(fetch["end"] as? Int == 7)
        #expect(fetch["messages"] as? Int == 7)
        let partitions = try #require(fetch["partitions"] as? [[String: Any]])
        #expect(partitions.map { $0["end"] as? Int } == [4, 3, 0])
        #expect(topics.filter { $0["name"] as? String != "\(prefix)fetch" }.allSatisfy { $0["end"] as? Int == 0 })

        let table = try await runBuiltExecutable(
            "marquee",
            ["topics", "list", "--pipeline-only"],
            environment: environment
        )
        let row = try #require(table.standardOutput.split(separator: "\n").first { $0.hasPrefix("\(prefix)fetch ") })
        #expect(row.split(separator: " ").map(String.init) == ["\(prefix)fetch", "fetch", "3", "7", "7"])
    }
}

extension TopicsCLITests {
    @Test func anUnreachableBrokerIsOneLineAndExit69() async throws {
        let run = try await runBuiltExecutable(
            "marquee",
            ["topics", "list", "--brokers", "127.0.0.1:1", "--timeout", "2"]
        )
        #expect(run.status == 69)
        #expect(run.standardError.hasPrefix("marquee: no broker answered within 2"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1)
    }
}

extension TopicsCLITests {
    /// Every subcommand that talks to the broker takes librdkafka properties as the workers do: `-X` one at a time,
    /// `MARQUEE_KAFKA_PROPERTIES` (or its `_FILE`) as a list, the flags over the list.
    @Test func librdkafkaPropertiesPassThroughFromFlagsAndTheEnvironment() async throws {
        let clear: [String: String?] = ["MARQUEE_KAFKA_PROPERTIES": nil, "MARQUEE_KAFKA_PROPERTIES_FILE": nil]
        // A property librdkafka refuses is a configuration error (78) wherever it came from; a flag that is not
        // key=value at all is a usage error (64).
        let flag = try await runBuiltExecutable(
            "marquee",
            ["topics", "list", "-X", "no.such.property=1"],
            environment: clear
        )
        #expect(flag.status == 78, "\(flag.standardError)")
        #expect(
            flag.standardError.contains("no.such.property"),
            "librdkafka refused the property it was given: \(flag.standardError)"
        )

        var environment = clear
        environment["MARQUEE_KAFKA_PROPERTIES"] = "client.rack=a,no.such.property=1"
        let listed = try await runBuiltExecutable("marquee", ["topics", "list"], environment: environment)
        #expect(listed.status == 78, "\(listed.standardError)")
        #expect(listed.standardError.contains("no.such.property"), "\(listed.standardError)")

        let malformed = try await runBuiltExecutable("marquee", ["lag", "-X", "novalue"], environment: clear)
        #expect(malformed.status == 64)
        #expect(
            malformed.standardError.contains("--kafka-property: 'novalue' is not key=value"),
            "\(malformed.standardError)"
        )

        // A real property, from both: the command works.
        environment["MARQUEE_KAFKA_PROPERTIES"] = "client.rack=a"
        let working = try await runBuiltExecutable(
            "marquee",
            ["topics", "list", "-X", "socket.keepalive.enable=true"],
            environment: environment
        )
        #expect(working.status == 0, "\(working.standardError)")
    }
}
