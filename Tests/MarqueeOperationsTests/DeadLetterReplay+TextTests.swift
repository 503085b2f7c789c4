import MarqueeCore
import MarqueeOperations
import Testing

@testable import MarqueeKafka

@Suite struct DeadLetterReplayTextTests {
    let layout = try! PipelineLayout(settings: ["MARQUEE_TOPIC_PREFIX": "mq."])

    static func letter(_ offset: Int64, errorKind: Envelope.ErrorKind = .permanent) -> DeadLetter {
        DeadLetter(
            record: deadLetterRecord(
                topic: "mq.fetch.dlq",
                offset: offset,
                value: movieJob.encoded(),
                headers: routedHeaders(attempt: 1, errorKind: errorKind, error: "HTTP 404")
            ),
            stage: "fetch"
        )
    }

    @Test func poisonLettersAreRefusedUnlessIncluded() {
        let letters = [Self.letter(1), Self.letter(2, errorKind: .poison), Self.letter(3)]
        let (replayed, refused) = DeadLetterReplay.selecting(letters, includingPoison: false)
        #expect(replayed.map(\.id.offset) == [1, 3])
        #expect(refused.map(\.id.offset) == [2])
        #expect(
            DeadLetterReplay.refusal(refused)
                == "1 poison letter not replayed (--include-poison replays them after a fix): fetch/0/2"
        )
        let all = DeadLetterReplay.selecting(letters, includingPoison: true)
        #expect(all.replayed.count == 3 && all.refused.isEmpty)
    }

    @Test func aDryRunSaysHowManyGoWhereAndShowsASample() {
        #expect(
            DeadLetterReplay.dryRun([Self.letter(1), Self.letter(2)], layout: self.layout) == """
                2 dead letters would be replayed (dry run) to mq.fetch (2).
                They are:
                ID         TO        KIND        ERROR KIND  KEY
                fetch/0/1  mq.fetch  tmdb.movie  permanent   tmdb:movie:550:ko-KR
                fetch/0/2  mq.fetch  tmdb.movie  permanent   tmdb:movie:550:ko-KR
                """
        )
        let many = DeadLetterReplay.dryRun((1...7).map { Self.letter($0) }, layout: self.layout)
        #expect(many.hasPrefix("7 dead letters would be replayed (dry run) to mq.fetch (7).\nThe first 5:\n"))
        #expect(many.split(separator: "\n").count == 2 + 6)
        #expect(DeadLetterReplay.dryRun([], layout: self.layout) == "0 dead letters would be replayed (dry run).")
    }

    @Test func eachReplayAndTheTotalAreOneLine() {
        let letter = Self.letter(1)
        #expect(
            DeadLetterReplay.line(letter, sentTo: KafkaDeliveryReport(topic: "mq.fetch", partition: 3, offset: 120))
                == "fetch/0/1 -> mq.fetch/3/120  tmdb.movie  tmdb:movie:550:ko-KR"
        )
        #expect(
            DeadLetterReplay.summary(sent: [letter], of: 3, layout: self.layout)
                == "1 of 3 dead letters replayed to mq.fetch (1)"
        )
        #expect(DeadLetterReplay.summary(sent: [], of: 1, layout: self.layout) == "0 of 1 dead letter replayed")
    }
}
