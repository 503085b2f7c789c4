import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import Testing

/// A record of `<prefix><stage>.dlq` as the broker would hold it.
func deadLetterRecord(
    topic: String = "marquee.fetch.dlq",
    partition: Int32 = 0,
    offset: Int64,
    key: String? = "tmdb:movie:550:ko-KR",
    value: [UInt8],
    headers: [KafkaHeader],
    timestamp: Int64? = 1_763_800_000_000
) -> KafkaRecord {
    KafkaRecord(
        partition: KafkaTopicPartition(topic: topic, partition: partition),
        offset: offset,
        key: key.map { Array($0.utf8) },
        value: value,
        headers: headers,
        timestamp: timestamp
    )
}

/// The headers the stage writes on a job it dead-letters (Stage.route): the job's envelope with the error facts.
func routedHeaders(
    attempt: Int,
    errorKind: Envelope.ErrorKind,
    error: String,
    origin: String = "marquee.fetch/1/7"
)
    -> [KafkaHeader]
{
    Envelope(
        id: JobID(rawValue: "01JOB"),
        root: JobID(rawValue: "01ROOT"),
        parent: JobID(rawValue: "01PARENT"),
        attempt: attempt,
        origin: origin,
        error: error,
        errorKind: errorKind,
        traceparent: "00-abc-def-01"
    ).kafkaHeaders
}

let movieJob = FetchJob.tmdbMovie(id: 550, language: "ko-KR", follow: .none)

@Suite struct DeadLetterTests {
    @Test func aJobTheStageDeadLetteredReadsWithEveryFact() {
        let record = deadLetterRecord(
            partition: 2,
            offset: 17,
            value: movieJob.encoded(),
            headers: routedHeaders(attempt: 4, errorKind: .transient, error: "HTTP 503 from api.themoviedb.org")
        )
        let letter = DeadLetter(record: record, stage: "fetch")
        #expect(letter.id == DeadLetterID(stage: "fetch", partition: 2, offset: 17))
        #expect(letter.id.description == "fetch/2/17")
        #expect(letter.kind == "tmdb.movie")
        #expect(letter.errorKind == "transient")
        #expect(letter.error == "HTTP 503 from api.themoviedb.org")
        #expect(letter.attempt == 4)
        #expect(letter.origin == "marquee.fetch/1/7")
        #expect(letter.jobID == "01JOB" && letter.root == "01ROOT" && letter.parent == "01PARENT")
        #expect(!letter.isPoison && !letter.isPurged)
        #expect(letter.age(nowMilliseconds: 1_763_800_090_000) == 90_000)
    }

    @Test func poisonKeepsItsBytesAndTheAppendedErrorHeadersWin() {
        // What Stage.deadLetterPoison writes: the original headers untouched (here a stale error of an earlier
        // run), then origin, error and error kind appended.
        let bytes: [UInt8] = [0xFF, 0xFE, 0x00, 0x7B]
        let record = deadLetterRecord(
            offset: 3,
            key: nil,
            value: bytes,
            headers: [
                KafkaHeader(key: "marquee-error", value: "old"), KafkaHeader(key: "x-custom", value: [0x01]),
                KafkaHeader(key: Envelope.Header.origin, value: "marquee.fetch/0/9"),
                KafkaHeader(key: Envelope.Header.error, value: "the payload is not UTF-8"),
                KafkaHeader(key: Envelope.Header.errorKind, value: "poison"),
            ]
        )
        let letter = DeadLetter(record: record, stage: "fetch")
        #expect(letter.kind == PayloadKind.unknown)
        #expect(letter.errorKind == "poison" && letter.isPoison)
        #expect(letter.error == "the payload is not UTF-8")
        #expect(letter.jobID == nil && letter.attempt == nil && letter.root == nil)
        #expect(letter.record.value == bytes, "the bytes are kept as they are")
    }

    @Test func missingOrStrangeHeadersReadAsUnknownNotAsAFailure() {
        let bare = DeadLetter(
            record: deadLetterRecord(offset: 0, value: Array("{}".utf8), headers: [], timestamp: nil),
            stage: "images"
        )
        #expect(bare.errorKind == DeadLetter.unknownErrorKind)
        #expect(bare.error == nil && bare.attempt == nil && bare.origin == nil && bare.timestamp == nil)
        #expect(bare.age(nowMilliseconds: 5) == nil)
        let strange = DeadLetter(
            record: deadLetterRecord(
                offset: 1,
                value: Array(#"{"kind":"somebody.else","v":1}"#.utf8),
                headers: [
                    KafkaHeader(key: Envelope.Header.errorKind, value: "fatal"),
                    KafkaHeader(key: Envelope.Header.attempt, value: "many"),
                    KafkaHeader(key: Envelope.Header.error, value: ""),
                ]
            ),
            stage: "images"
        )
        #expect(strange.errorKind == "unknown" && strange.attempt == nil && strange.error == nil)
        #expect(strange.kind == "unknown", "a kind Marquee does not know keeps the label set bounded")
    }

    @Test func aRecordsStageLetterIsKindedByItsRecord() {
        let record = Record(kind: .movie, key: "tmdb:movie:550", fetchedAt: 1, data: ["id": .integer(550)])
        let letter = DeadLetter(
            record: deadLetterRecord(
                topic: "marquee.records.dlq",
                offset: 0,
                value: record.encoded(),
                headers: routedHeaders(attempt: 1, errorKind: .permanent, error: "field 'data.title': required")
            ),
            stage: "records"
        )
        #expect(letter.kind == "movie")
        #expect(letter.errorKind == "permanent")
    }

    @Test func jsonHasSnakeCaseFactsAndOptionallyTheContent() throws {
        let letter = DeadLetter(
            record: deadLetterRecord(
                partition: 1,
                offset: 4,
                value: movieJob.encoded(),
                headers: routedHeaders(attempt: 1, errorKind: .permanent, error: "HTTP 404")
            ),
            stage: "fetch",
            isPurged: true
        )
        let json = letter.json(nowMilliseconds: 1_763_800_060_000)
        guard case .object(let object) = json else {
            Issue.record("not an object")
            return
        }
        #expect(object["id"] == .string("fetch/1/4"))
        #expect(object["error_kind"] == .string("permanent"))
        #expect(object["attempt"] == .integer(1))
        #expect(object["age_seconds"] == .integer(60))
        #expect(object["time"] == .string("2025-11-22T08:26:40Z"))
        #expect(object["purged"] == .bool(true))
        #expect(object["payload"] == nil, "no content unless asked")

        guard case .object(let full) = letter.json(nowMilliseconds: 0, includingContent: true) else { return }
        #expect(full["payload"] == (try JSONValue.parse(movieJob.encoded())))
        guard case .array(let headers) = full["headers"] else {
            Issue.record("no headers")
            return
        }
        #expect(headers.first == .object(["name": .string("marquee-id"), "value": .string("01JOB")]))

        let text = DeadLetter(
            record: deadLetterRecord(offset: 0, value: Array("not json".utf8), headers: []),
            stage: "fetch"
        )
        guard case .object(let textObject) = text.json(nowMilliseconds: 0, includingContent: true) else { return }
        #expect(textObject["payload_text"] == .string("not json"))
        let binary = DeadLetter(record: deadLetterRecord(offset: 0, value: [0xFF, 0x00], headers: []), stage: "fetch")
        guard case .object(let binaryObject) = binary.json(nowMilliseconds: 0, includingContent: true) else { return }
        #expect(binaryObject["payload_base64"] == .string("/wA="))
    }
}

@Suite struct DeadLetterTextTests {
    @Test func jsonIsReindentedWithItsKeysInOrderAndItsStringsUntouched() {
        let json = #"{"z":1, "a":[],"b" :{"c":"x{,}:[y]\"z\\"},"d":[1,{"e":null}],"f":{ }}"#
        #expect(
            DeadLetter.indentedJSON(Array(json.utf8)) == #"""
                {
                  "z": 1,
                  "a": [],
                  "b": {
                    "c": "x{,}:[y]\"z\\"
                  },
                  "d": [
                    1,
                    {
                      "e": null
                    }
                  ],
                  "f": {}
                }
                """#
        )
        #expect(DeadLetter.indentedJSON(Array("[]".utf8)) == "[]")
        #expect(DeadLetter.indentedJSON(Array(#""기생충""#.utf8)) == #""기생충""#)
    }

    @Test func anythingElseIsEscapedOntoOneLine() {
        let text = "한국어 text\tab\n\u{1b}[0m \\ end"
        #expect(DeadLetter.escaped(Array(text.utf8)) == #"한국어 text\tab\n\u{1b}[0m \\ end"#)
        #expect(DeadLetter.escaped([0xFF, 0x00, 0x41, 0x0A, 0x5C, 0xE2, 0x82]) == #"\xff\x00A\n\\\xe2\x82"#)
        #expect(DeadLetter.escaped([]) == "")
    }

    @Test func aPayloadReadsAsJSONTextOrBytes() {
        func letter(_ value: [UInt8]) -> DeadLetter {
            DeadLetter(record: deadLetterRecord(offset: 0, value: value, headers: []), stage: "fetch")
        }
        let json = letter(Array(#"{"v":1}"#.utf8))
        #expect(json.payloadForm == .json && json.readablePayload == "{\n  \"v\": 1\n}")
        let text = letter(Array("{not json\n".utf8))
        #expect(text.payloadForm == .text && text.readablePayload == #"{not json\n"#)
        let bytes = letter([0xC3, 0x28])
        #expect(bytes.payloadForm == .binary && bytes.readablePayload == #"\xc3("#)
    }
}

@Suite struct DeadLetterIDTests {
    let layout = try! PipelineLayout(settings: ["MARQUEE_TOPIC_PREFIX": "mq."])

    @Test func readsStagePartitionOffsetAndTheTopicForm() throws {
        #expect(
            try DeadLetterID(parsing: "fetch/2/17", layout: self.layout)
                == DeadLetterID(stage: "fetch", partition: 2, offset: 17)
        )
        #expect(
            try DeadLetterID(parsing: "mq.images.dlq/0/3", layout: self.layout)
                == DeadLetterID(stage: "images", partition: 0, offset: 3)
        )
        let id = DeadLetterID(stage: "records", partition: 7, offset: 123_456_789_012)
        #expect(try DeadLetterID(parsing: id.description, layout: self.layout) == id)
    }

    @Test(arguments: [
        ("fetch/2", "expected stage/partition/offset"),
        ("fetch", "expected stage/partition/offset"),
        ("fetch/x/1", "the partition 'x' is not a number"),
        ("fetch/-1/1", "the partition '-1' is not a number"),
        ("fetch/1/", "the offset '' is not a number"),
        ("nope/1/2", "no stage or dead-letter topic 'nope' (stages: fetch, images, records)"),
        ("marquee.fetch.dlq/1/2", "no stage or dead-letter topic 'marquee.fetch.dlq'"),
    ])
    func malformedIdsSayWhatIsWrong(_ text: String, _ reason: String) {
        #expect {
            _ = try DeadLetterID(parsing: text, layout: self.layout)
        } throws: { error in
            (error as? OperationsError)?.description.contains(reason) == true
        }
    }

    @Test func idsSortInPipelineOrderThenPartitionThenOffset() {
        let ids = [
            DeadLetterID(stage: "records", partition: 0, offset: 0),
            DeadLetterID(stage: "fetch", partition: 1, offset: 2),
            DeadLetterID(stage: "images", partition: 0, offset: 9),
            DeadLetterID(stage: "fetch", partition: 1, offset: 10),
            DeadLetterID(stage: "fetch", partition: 0, offset: 50),
        ]
        #expect(
            ids.sorted().map(\.description) == ["fetch/0/50", "fetch/1/2", "fetch/1/10", "images/0/9", "records/0/0"]
        )
    }
}
