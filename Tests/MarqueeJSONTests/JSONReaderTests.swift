import MarqueeJSON
import Testing

@Suite struct JSONReaderTests {
    @Test func parsesValues() {
        let json = JSONDocument.parse(
            Array(#" {"a": [1, -2.5, 1e3, "x\u00e9\ud83c\udfac\n", true, false, null], "b": {}} "#.utf8)
        )
        #expect(
            json
                == .object([
                    "a": .array([
                        .integer(1), .number(-2.5), .number(1000), .string("xé🎬\n"), .bool(true), .bool(false), .null,
                    ]),
                    "b": .object([:]),
                ])
        )
        #expect(JSONDocument.parse(Array("1767943745926332416".utf8)) == .integer(1_767_943_745_926_332_416))
        #expect(JSONDocument.parse(Array("99999999999999999999".utf8)) == .number(1e20))
        #expect(JSONDocument.parse([0xEF, 0xBB, 0xBF] + Array("[]".utf8)) == .array([]))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "{a:1}", "01", "1.", "-", "'x'", "[1] [2]", "\"\u{01}\"", "\"\\x\"", "nul",
        "{\"a\" 1}", "\"\\ud83c\"",
    ])
    func refusesInvalidDocuments(text: String) {
        #expect(JSONDocument.parse(Array(text.utf8)) == nil)
    }

    @Test func refusesDeepNesting() {
        #expect(
            JSONDocument.parse(Array((String(repeating: "[", count: 300) + String(repeating: "]", count: 300)).utf8))
                == nil
        )
        #expect(
            JSONDocument.parse(Array((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8))
                != nil
        )
    }

    @Test func refusesInvalidUTF8() {
        #expect(JSONDocument.parse([0x22, 0xFF, 0x22]) == nil)
    }
}

@Suite struct JSONEncodingTests {
    @Test func encodesCompactlyWithSortedKeysAndRoundTrips() {
        let value = JSONValue.object([
            "z": .array([.integer(-3), .number(7.5), .number(1e-5), .bool(true), .null]),
            "a": .string("quote \" back \\ slash / tab \t nl \n cr \r bell \u{07} 한글 🎬"),
            "m": .object([:]),
        ])
        let text = String(decoding: value.encoded(), as: UTF8.self)
        #expect(
            text.hasPrefix(#"{"a":"quote \" back \\ slash / tab \t nl \n cr \r bell \u0007 한글 🎬","m":{},"z":[-3,7.5,"#)
        )
        #expect(JSONDocument.parse(value.encoded()) == value, "what is written reads back the same")
    }
}
