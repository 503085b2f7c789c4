import MarqueeCore
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import Testing

@Suite struct DeadLetterFilterTests {
    static let now: Int64 = 1_795_339_800_000  // 2026-11-22T09:30:00Z

    static func letter(
        stage: String = "fetch",
        offset: Int64 = 0,
        payload: [UInt8] = movieJob.encoded(),
        errorKind: Envelope.ErrorKind = .permanent,
        error: String = "HTTP 404: The resource you requested could not be found.",
        timestamp: Int64? = now - 3_600_000,
        isPurged: Bool = false
    ) -> DeadLetter {
        DeadLetter(
            record: deadLetterRecord(
                topic: "marquee.\(stage).dlq",
                offset: offset,
                value: payload,
                headers: routedHeaders(attempt: 1, errorKind: errorKind, error: error),
                timestamp: timestamp
            ),
            stage: stage,
            isPurged: isPurged
        )
    }

    @Test func anEmptyFilterTakesEveryUnpurgedLetter() {
        let filter = DeadLetterFilter()
        #expect(filter.selectsEverything)
        #expect(filter.matches(Self.letter()))
        #expect(!filter.matches(Self.letter(isPurged: true)))
        var all = filter
        all.includesPurged = true
        #expect(all.matches(Self.letter(isPurged: true)))
    }

    @Test func everyFilterThatIsSetMustMatch() {
        var filter = DeadLetterFilter()
        filter.stages = ["fetch", "images"]
        filter.kinds = ["tmdb.movie"]
        filter.errorKinds = ["permanent", "poison"]
        filter.errorText = "COULD NOT be found"
        #expect(!filter.selectsEverything)
        #expect(filter.matches(Self.letter()))
        #expect(!filter.matches(Self.letter(stage: "records")))
        #expect(!filter.matches(Self.letter(payload: FetchJob.tmdbGenres(language: "ko-KR").encoded())))
        #expect(!filter.matches(Self.letter(errorKind: .transient)))
        #expect(!filter.matches(Self.letter(error: "HTTP 500")))
        #expect(filter.includes(stage: "images") && !filter.includes(stage: "records"))
    }

    @Test func sinceIsInclusiveUntilIsExclusiveAndALetterWithoutTimeFailsBoth() {
        var filter = DeadLetterFilter()
        filter.since = Self.now - 7_200_000
        filter.until = Self.now - 3_600_000
        #expect(filter.matches(Self.letter(timestamp: Self.now - 7_200_000)))
        #expect(!filter.matches(Self.letter(timestamp: Self.now - 7_200_001)))
        #expect(!filter.matches(Self.letter(timestamp: Self.now - 3_600_000)))
        #expect(!filter.matches(Self.letter(timestamp: nil)))
        #expect(DeadLetterFilter().matches(Self.letter(timestamp: nil)))
    }

    static let times: [(String, Int64)] = [
        ("90s", now - 90_000),
        ("15m", now - 900_000),
        ("2h", now - 7_200_000),
        ("3d", now - 259_200_000),
        ("1w", now - 604_800_000),
        ("0s", now),
        ("2026-11-22T09:30:00Z", now),
        ("2026-11-22T18:30:00+09:00", now),
        ("2026-11-22T09:30:00.250Z", now + 250),
        ("2026-11-22", now - 34_200_000),
    ]

    @Test(arguments: Self.times)
    func timesAreAgoOrISO8601(_ text: String, _ expected: Int64) throws {
        #expect(try DeadLetterFilter.time(text, nowMilliseconds: Self.now) == expected)
    }

    @Test(arguments: [
        "", "2", "h", "-2h", "2x", "yesterday", "2026-11-22 09:30", "2026-11-22T09:30:00", "99999999999999999999w",
    ])
    func unreadableTimesAreRefused(_ text: String) {
        #expect(throws: OperationsError.self) { try DeadLetterFilter.time(text, nowMilliseconds: Self.now) }
    }

    @Test func timesPrintAsISO8601InUTC() {
        #expect(DeadLetterFilter.format(milliseconds: Self.now + 999) == "2026-11-22T09:30:00Z")
    }

    @Test func aListingKeepsTheNewestLettersOldestFirstAndCountsEveryMatch() {
        var listing = DeadLetterListing(partitions: [], limit: 3)
        // Out of order, as rounds over several partitions deliver them.
        for (offset, minutesAgo) in [(0, 50), (1, 10), (2, 40), (3, 30), (4, 20), (5, 60), (6, 5)] {
            let timestamp = Self.now - Int64(minutesAgo) * 60_000
            listing.add(
                Self.letter(
                    offset: Int64(offset),
                    errorKind: offset == 6 ? .transient : .permanent,
                    timestamp: timestamp
                )
            )
        }
        listing.add(Self.letter(stage: "images", offset: 0))
        #expect(listing.matched == 8)
        #expect(listing.letters.map(\.id.description) == ["fetch/0/4", "fetch/0/1", "fetch/0/6"])
        #expect(
            listing.counts == [
                DeadLetterCount(stage: "fetch", errorKind: "permanent"): 6,
                DeadLetterCount(stage: "fetch", errorKind: "transient"): 1,
                DeadLetterCount(stage: "images", errorKind: "permanent"): 1,
            ]
        )
        var unlimited = DeadLetterListing(partitions: [], limit: nil)
        for offset in (0..<10).reversed() { unlimited.add(Self.letter(offset: Int64(offset), timestamp: Self.now)) }
        #expect(unlimited.letters.map(\.id.offset) == Array(0..<10), "the same time: by id")
    }
}
