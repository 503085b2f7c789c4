import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import Testing

@Suite struct DeadLetterPurgeTests {
    static let zero = KafkaTopicPartition(topic: "marquee.fetch.dlq", partition: 0)
    static let one = KafkaTopicPartition(topic: "marquee.fetch.dlq", partition: 1)

    static func letter(_ partition: Int32, _ offset: Int64) -> DeadLetter {
        DeadLetter(
            record: deadLetterRecord(partition: partition, offset: offset, value: movieJob.encoded(), headers: []),
            stage: "fetch"
        )
    }

    /// Feeds letters `offsets` of a partition, selected where `selected` says so.
    static func purge(starts: [KafkaTopicPartition: Int64], _ letters: [(Int32, Int64, Bool)]) -> DeadLetterPurge {
        var purge = DeadLetterPurge(starts: starts)
        for (partition, offset, selected) in letters {
            purge.consider(Self.letter(partition, offset), selected: selected)
        }
        return purge
    }

    @Test func everySelectedLetterOfAPartitionMovesItPastTheLastOne() {
        let purge = Self.purge(starts: [Self.zero: 3], [(0, 3, true), (0, 4, true), (0, 5, true)])
        #expect(purge.positions[Self.zero] == 6)
        #expect(purge.commits == [Self.zero: 6])
        #expect(purge.hidden.map(\.description) == ["fetch/0/3", "fetch/0/4", "fetch/0/5"])
        #expect(purge.blocked.isEmpty)
    }

    @Test func aLetterNotSelectedStopsThePurgeOfItsPartitionAndIsNeverHidden() {
        let purge = Self.purge(
            starts: [Self.zero: 0, Self.one: 10],
            [
                (0, 0, true), (0, 1, true), (0, 2, false), (0, 3, true), (0, 4, false), (0, 5, true), (1, 10, true),
                (1, 11, true),
            ]
        )
        #expect(purge.positions[Self.zero] == 2, "up to, not past, fetch/0/2")
        #expect(purge.positions[Self.one] == 12, "partitions are independent")
        #expect(purge.hidden.map(\.description) == ["fetch/0/0", "fetch/0/1", "fetch/1/10", "fetch/1/11"])
        #expect(purge.blocked.map(\.description) == ["fetch/0/3", "fetch/0/5"])
    }

    @Test func nothingSelectedAtTheFrontCommitsNothing() {
        let purge = Self.purge(starts: [Self.zero: 7, Self.one: 0], [(0, 7, false), (0, 8, true)])
        #expect(purge.commits.isEmpty, "partition 0 cannot move, partition 1 had no letters")
        #expect(purge.hidden.isEmpty)
        #expect(purge.blocked.map(\.description) == ["fetch/0/8"])
        #expect(purge.positions == [Self.zero: 7, Self.one: 0])
    }

    @Test func lettersBeforeTheStartAreAlreadyPurgedAndIgnored() {
        let purge = Self.purge(starts: [Self.zero: 5], [(0, 3, false), (0, 4, true), (0, 5, true)])
        #expect(purge.commits == [Self.zero: 6])
        #expect(purge.hidden.map(\.description) == ["fetch/0/5"])
        #expect(purge.blocked.isEmpty)
    }

    @Test func gapsInOffsetsAreJumpedOver() {
        // Compacted or transactional topics have gaps: the position follows the letters, not a count.
        let purge = Self.purge(starts: [Self.zero: 0], [(0, 2, true), (0, 9, true)])
        #expect(purge.commits == [Self.zero: 10])
    }
}

@Suite struct DeadLetterReplayTests {
    let layout = try! PipelineLayout(settings: ["MARQUEE_TOPIC_PREFIX": "mq."])

    @Test func aReplayIsTheSameJobOnItsMainTopicWithAFreshAttemptAndWhereItCameFrom() {
        var headers = routedHeaders(attempt: 4, errorKind: .transient, error: "HTTP 503")
        headers.append(KafkaHeader(key: Envelope.Header.notBefore, value: "1795339800000"))
        headers.append(KafkaHeader(key: "x-custom", value: [0x00, 0x01]))
        headers.append(KafkaHeader(key: Envelope.Header.replayedFrom, value: "mq.fetch.dlq/0/1"))
        let letter = DeadLetter(
            record: deadLetterRecord(
                topic: "mq.fetch.dlq",
                partition: 2,
                offset: 17,
                value: movieJob.encoded(),
                headers: headers
            ),
            stage: "fetch"
        )
        let message = DeadLetterReplay.message(replaying: letter, layout: self.layout)
        #expect(message.topic == "mq.fetch")
        #expect(message.partition == nil, "the partitioner places it by key, as the stage did")
        #expect(message.key == Array("tmdb:movie:550:ko-KR".utf8))
        #expect(message.value == movieJob.encoded())
        #expect(
            message.headers.map(\.key) == [
                "marquee-id", "marquee-root", "marquee-parent", "traceparent", "x-custom", "marquee-attempt",
                "marquee-replayed-from",
            ]
        )
        #expect(message.headers.string(Envelope.Header.replayedFrom) == "mq.fetch.dlq/2/17")
        #expect(message.headers.first { $0.key == "x-custom" }?.value == [0x00, 0x01])
        let envelope = try? Envelope(headers: message.headers.map { ($0.key, $0.stringValue) })
        #expect(
            envelope
                == Envelope(
                    id: JobID(rawValue: "01JOB"),
                    root: JobID(rawValue: "01ROOT"),
                    parent: JobID(rawValue: "01PARENT"),
                    attempt: 1,
                    traceparent: "00-abc-def-01"
                )
        )
    }

    @Test func aPoisonReplayKeepsItsOwnHeadersAndBytes() {
        let letter = DeadLetter(
            record: deadLetterRecord(
                topic: "mq.records.dlq",
                offset: 0,
                key: nil,
                value: [0xFF],
                headers: [
                    KafkaHeader(key: "producer", value: "legacy"),
                    KafkaHeader(key: Envelope.Header.origin, value: "mq.records/0/0"),
                    KafkaHeader(key: Envelope.Header.error, value: "not UTF-8"),
                    KafkaHeader(key: Envelope.Header.errorKind, value: "poison"),
                ]
            ),
            stage: "records"
        )
        let message = DeadLetterReplay.message(replaying: letter, layout: self.layout)
        #expect(message.topic == "mq.records")
        #expect(message.key == nil && message.value == [0xFF])
        #expect(message.headers.map(\.key) == ["producer", "marquee-attempt", "marquee-replayed-from"])
    }
}
