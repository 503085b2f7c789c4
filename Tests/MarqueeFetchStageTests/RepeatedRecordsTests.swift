import MarqueeCore
import MarqueeFetchStage
import MarqueeJSON
import Testing

/// The genre records a details answer repeats go once an hour (docs/records.md, "genre").
@Suite struct RepeatedRecordsTests {
    static func genre(_ id: Int64, _ name: String, language: String = "en-US", at fetchedAt: Int64 = 1) -> Record {
        Record(
            kind: .genre,
            key: "tmdb:genre:\(id):\(language)",
            fetchedAt: fetchedAt,
            data: ["genre_id": .integer(id), "language": .string(language), "name": .string(name)]
        )
    }

    @Test func aDeliveredRecordStandsForItsRepeatsUntilItIsOld() {
        let repeated = RepeatedRecords(maxAge: .seconds(60))
        let start = ContinuousClock.now
        #expect(!repeated.isRepeat(Self.genre(28, "Action"), now: start), "nothing delivered yet")
        repeated.remember([Self.genre(28, "Action")], at: start)
        // Fetched later, the same data: a repeat.
        #expect(repeated.isRepeat(Self.genre(28, "Action", at: 99), now: start + .seconds(59)))
        #expect(!repeated.isRepeat(Self.genre(28, "Action"), now: start + .seconds(60)), "old: it goes again")
        #expect(!repeated.isRepeat(Self.genre(28, "Action Movies"), now: start + .seconds(1)), "a new name goes")
        #expect(!repeated.isRepeat(Self.genre(28, "액션", language: "ko-KR"), now: start), "another language")
        #expect(!repeated.isRepeat(Self.genre(12, "Action"), now: start), "another genre")
    }

    @Test func pastItsCapacityTheMemoryStartsOver() {
        let repeated = RepeatedRecords(capacity: 3)
        let now = ContinuousClock.now
        repeated.remember([Self.genre(1, "a"), Self.genre(2, "b"), Self.genre(3, "c")], at: now)
        #expect(repeated.count == 3 && repeated.isRepeat(Self.genre(1, "a"), now: now))
        repeated.remember([Self.genre(4, "d")], at: now)
        #expect(repeated.count == 1)
        #expect(!repeated.isRepeat(Self.genre(1, "a"), now: now))
        #expect(repeated.isRepeat(Self.genre(4, "d"), now: now))
    }
}
