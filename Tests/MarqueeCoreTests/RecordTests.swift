import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct RecordTests {
    /// A record of written data is the record of the same object: equal, hashed alike, written to the same bytes,
    /// its data readable and replaceable.
    @Test func aRecordOfWrittenDataIsTheRecordOfItsObject() throws {
        var writer = JSONWriter.object()
        writer.write("movie_id", Int64(550))
        writer.write("title", "Fight Club")
        let written = Record(kind: .movie, key: "tmdb:movie:550", fetchedAt: 1_700_000_000_000, writtenData: writer)
        let built = Record(
            kind: .movie,
            key: "tmdb:movie:550",
            fetchedAt: 1_700_000_000_000,
            data: ["title": .string("Fight Club"), "movie_id": .integer(550)]
        )
        #expect(written == built)
        #expect(written.hashValue == built.hashValue)
        #expect(written.encoded() == built.encoded())
        #expect(written.data["title"] == .string("Fight Club"))
        #expect(try Record.decode(written.encoded()) == built)

        var other = written
        other.data["title"] = .string("Se7en")
        #expect(other != written)
        #expect(other.data == ["movie_id": .integer(550), "title": .string("Se7en")])
        var differentKey = written
        differentKey.key = "tmdb:movie:551"
        #expect(differentKey != written)
    }

}
