import MarqueeCore
import Testing

@Suite struct JSONObjectWriterTests {
    /// Every kind of member, in key order, against the same object built as a `JSONObject` and encoded.
    @Test func writesTheBytesTheEquivalentObjectEncodesTo() throws {
        var writer = JSONObjectWriter(capacity: 8)
        writer.write("a_null_string", nil as String?)
        writer.write("array_of_ints", [Int64(3), -1, .max])
        writer.write("array_of_strings", ["x", "quote \" and \\ and\nnewline", "é 東京"])
        writer.write("b_bool", true)
        writer.write("c_double", 6.5)
        writer.write("c_double_integral", 7.0)
        writer.write("empty_arrays", [Int64]())
        writer.write("f_false", false)
        writer.write("int", Int64.min)
        writer.write("null_bool", nil as Bool?)
        writer.write("null_double", nil as Double?)
        writer.write("null_int", nil as Int64?)
        writer.write("string", "tab\there, control \u{01}, slash /")
        let written = writer.finish()

        let object: JSONObject = [
            "string": .string("tab\there, control \u{01}, slash /"),
            "null_int": .null, "null_double": .null, "null_bool": .null,
            "int": .integer(.min), "f_false": .bool(false), "empty_arrays": .array([]),
            "c_double_integral": .number(7), "c_double": .number(6.5), "b_bool": .bool(true),
            "array_of_strings": .array([.string("x"), .string("quote \" and \\ and\nnewline"), .string("é 東京")]),
            "array_of_ints": .array([.integer(3), .integer(-1), .integer(.max)]),
            "a_null_string": .null,
        ]
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: JSONValue.object(object).encoded(), as: UTF8.self))
        #expect(try JSONValue.parse(written) == .object(object))
    }

    @Test func anEmptyObjectIsBraces() {
        #expect(JSONObjectWriter().finish() == Array("{}".utf8))
    }

    /// A record of written data is the record of the same object: equal, hashed alike, written to the same bytes,
    /// its data readable and replaceable.
    @Test func aRecordOfWrittenDataIsTheRecordOfItsObject() throws {
        var writer = JSONObjectWriter()
        writer.write("movie_id", Int64(550))
        writer.write("title", "Fight Club")
        let written = Record(kind: .movie, key: "tmdb:movie:550", fetchedAt: 1_700_000_000_000, writtenData: writer)
        let built = Record(
            kind: .movie, key: "tmdb:movie:550", fetchedAt: 1_700_000_000_000,
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

    #if DEBUG
        /// Keys out of order (or twice) would write an object other than the one meant: assertions stop it.
        @Test func aKeyOutOfOrderStopsABuildWithAssertions() async {
            await #expect(processExitsWith: .failure) {
                var writer = JSONObjectWriter()
                writer.write("title", "x")
                writer.write("movie_id", Int64(1))
            }
            await #expect(processExitsWith: .failure) {
                var writer = JSONObjectWriter()
                writer.write("title", "x")
                writer.write("title", "y")
            }
        }
    #endif
}
