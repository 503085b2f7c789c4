import MarqueeCore
import MarqueeKafka
import Testing

@testable import MarqueeOperations

@Suite struct DeadLetterListingTextTests {
    typealias Letter = DeadLetterFilterTests

    /// Two letters, fetch's an hour old and images' two minutes, and two purged letters in fetch's partition.
    static func listing(limit: Int? = nil) -> DeadLetterListing {
        let partition = DeadLetterQueue.Partition(
            stage: "fetch",
            partition: KafkaTopicPartition(topic: "marquee.fetch.dlq", partition: 0),
            start: 0,
            end: 4,
            committed: 2
        )
        var listing = DeadLetterListing(partitions: [partition], limit: limit)
        listing.add(Letter.letter(offset: 3))
        listing.add(
            Letter.letter(stage: "images", errorKind: .transient, error: "timeout", timestamp: Letter.now - 120_000)
        )
        return listing
    }

    @Test func theListIsATableOldestFirstThenCountsAndWhatWasLeftOut() {
        #expect(
            Self.listing().text(nowMilliseconds: Letter.now, includesPurged: false) == """
                ID          KIND        ERROR KIND  ATTEMPTS  AGE  ERROR
                fetch/0/3   tmdb.movie  permanent          1   1h  HTTP 404: The resource you requested could not be found.
                images/0/0  tmdb.movie  transient          1   2m  timeout

                2 dead letters:
                  fetch   permanent  1
                  images  transient  1
                2 purged not shown (--all shows them)
                """
        )
    }

    @Test func withPurgedLettersIncludedTheyAreMarkedAndNotCountedAsLeftOut() {
        let text = Self.listing().text(nowMilliseconds: Letter.now, includesPurged: true)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "ID          PURGED  KIND        ERROR KIND  ATTEMPTS  AGE  ERROR")
        #expect(!text.contains("purged not shown"))
    }

    @Test func theSummarySaysWhenTheLimitLeftMatchesOutAndWhenNothingMatched() {
        #expect(
            Self.listing(limit: 1).summary(includesPurged: true).hasPrefix(
                "2 dead letters, the newest 1 shown (--limit):\n"
            )
        )
        let empty = DeadLetterListing(partitions: [], limit: nil)
        #expect(empty.text(nowMilliseconds: Letter.now, includesPurged: false) == "no dead letters")
    }
}
