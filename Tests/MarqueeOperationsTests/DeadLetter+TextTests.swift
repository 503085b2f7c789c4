import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import Testing

@Suite struct DeadLetterDetailsTests {
    @Test func aLetterInFullHasItsFactsHeadersAndIndentedPayload() {
        let letter = DeadLetter(
            record: deadLetterRecord(
                partition: 2,
                offset: 17,
                value: Array(#"{"v":1,"kind":"tmdb.genres","language":"ko"}"#.utf8),
                headers: routedHeaders(attempt: 4, errorKind: .transient, error: "HTTP 503"),
                timestamp: DeadLetterFilterTests.now - 90_000
            ),
            stage: "fetch"
        )
        let text = letter.details(nowMilliseconds: DeadLetterFilterTests.now)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.prefix(13) == [
                "id          fetch/2/17",
                "topic       marquee.fetch.dlq, partition 2, offset 17",
                "kind        tmdb.genres",
                "error kind  transient",
                "error       HTTP 503",
                "attempts    4",
                "origin      marquee.fetch/1/7",
                "job         01JOB",
                "root        01ROOT",
                "parent      01PARENT",
                "key         tmdb:movie:550:ko-KR",
                "time        2026-11-22T09:28:30Z (1m ago)",
                "purged      no",
            ]
        )
        #expect(lines.contains("headers (\(letter.record.headers.count)):"))
        #expect(lines.contains("  marquee-error: HTTP 503"))
        #expect(
            text.hasSuffix(
                """
                payload (44 bytes, JSON):
                {
                  "v": 1,
                  "kind": "tmdb.genres",
                  "language": "ko"
                }
                """
            )
        )
    }

    @Test func aKeyAndPayloadThatAreNotTextAreEscaped() {
        let letter = DeadLetter(
            record: deadLetterRecord(offset: 1, key: nil, value: [0x66, 0xFF, 0x0A], headers: []),
            stage: "fetch"
        )
        let text = letter.details(nowMilliseconds: DeadLetterFilterTests.now)
        #expect(text.contains("\nkey         -\n"))
        #expect(text.contains("\nerror kind  unknown\n"))
        #expect(text.hasSuffix("payload (3 bytes, not UTF-8, escaped):\nf\\xff\\n"))
        #expect(letter.readableKey == "-")
    }

    @Test func idListsStopAtFive() {
        let ids = (0..<7).map { DeadLetterID(stage: "fetch", partition: 0, offset: Int64($0)) }
        #expect(DeadLetterID.firstFive(Array(ids.prefix(2))) == "fetch/0/0, fetch/0/1")
        #expect(DeadLetterID.firstFive(ids) == "fetch/0/0, fetch/0/1, fetch/0/2, fetch/0/3, fetch/0/4, …")
    }
}
