import Foundation
import MarqueeCore
import Testing

@testable import MarqueeJSON

/// The reader, the writer and the payloads' encoders agree with the simpler ones they replaced
/// (``ReferenceStrictJSON``, ``ReferenceJSONWriter``) on every recorded fixture and on edge cases.
@Suite struct JSONReaderEquivalenceTests {
    /// `Tests/Fixtures`.
    static let fixturesRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // MarqueeJSONTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures", isDirectory: true)

    static func fixtures() throws -> [(String, [UInt8])] {
        var files: [(String, [UInt8])] = []
        for directory in ["tmdb", "kofic", "kakao", "openlibrary"] {
            let folder = Self.fixturesRoot.appendingPathComponent(directory)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
                let data = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(name).path))
                files.append(("\(directory)/\(name)", Array(data)))
            }
        }
        return files
    }

    /// Documents around every branch of the reader: numbers at the Int64 bounds, escapes, surrogates, invalid
    /// UTF-8 inside and outside strings, duplicate keys, literals cut short, whitespace and byte order marks.
    static let edgeDocuments: [[UInt8]] =
        [
            "0", "-0", "-", "01", "1.", "1.5", "-1.5e3", "1E+2", "1e-400", "1e400", "-1e400", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
            "123456789012345678901234567890", "0.1", "-0.0", "[1,2,3]", "[1,]", "[,1]", "[]", "{}", "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"b\":{\"a\":1,\"a\":[]}}", "{\"a\":1,}", "{\"a\" : 1 , \"b\" :2}", "\"\"", "\"plain\"",
            "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\"\\u0041\\u00e9\\u4e2d\"", "\"\\ud83c\\udfac\"",
            "\"\\ud83c\"",
            "\"\\udfac\"", "\"\\ud83cx\"", "\"\\ud83c\\u0041\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\x\"", "\"tab\there\"",
            "\"é 한글 🎬\"", "\"unterminated", "\"\\", "true", "tru", "false", "fals", "null", "nul", "nulls",
            " \n\t\r[ ] ",
            "[1] [2]", "{\"k\":true,\"l\":false,\"m\":null}", "[[[[[]]]]]", "{\"a\":\"x\\u0000y\"}",
        ].map { Array($0.utf8) } + [
            [0xEF, 0xBB, 0xBF] + Array("{\"a\":1}".utf8),
            [0xEF, 0xBB] + Array("{}".utf8),
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC3, 0xA9, 0x22], [0x22, 0xC3, 0x5C, 0x6E, 0x22],
            [0x22, 0xE2, 0x82, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x5B, 0xC3, 0xA9, 0x5D], [0x22, 0x00, 0x22],
            Array((String(repeating: "[", count: 256) + String(repeating: "]", count: 256)).utf8),
            Array((String(repeating: "[", count: 255) + String(repeating: "]", count: 255)).utf8),
        ]

    @Test func readsEveryFixtureAsBefore() throws {
        for (name, bytes) in try Self.fixtures() {
            for refuses in [false, true] {
                #expect(
                    JSONDocument.parse(bytes, refusesDuplicateKeys: refuses)
                        == ReferenceStrictJSON.parse(bytes, refusesDuplicateKeys: refuses),
                    "\(name)"
                )
            }
            // Every prefix of a small fixture is refused or read exactly as before.
            if bytes.count < 3000 {
                for end in stride(from: 0, to: bytes.count, by: 7) {
                    #expect(
                        JSONDocument.parse(bytes[..<end]) == ReferenceStrictJSON.parse(bytes[..<end]),
                        "\(name) [..<\(end)]"
                    )
                }
            }
        }
    }

    @Test func readsEdgeCasesAsBefore() {
        for bytes in Self.edgeDocuments {
            for refuses in [false, true] {
                let new = JSONDocument.parse(bytes, refusesDuplicateKeys: refuses)
                #expect(new == ReferenceStrictJSON.parse(bytes, refusesDuplicateKeys: refuses), "\(bytes)")
            }
            // A non-contiguous collection of the same bytes reads the same.
            #expect(JSONDocument.parse(AnyCollection(bytes)) == ReferenceStrictJSON.parse(bytes), "\(bytes)")
        }
        #expect(JSONDocument.parse(Array("-9223372036854775808".utf8)) == .integer(.min))
        #expect(JSONDocument.parse(Array("9223372036854775808".utf8)) == .number(9_223_372_036_854_775_808))
    }

    @Test func writesEveryFixtureAsBefore() throws {
        for (name, bytes) in try Self.fixtures() {
            guard let value = JSONDocument.parse(bytes) else { continue }
            #expect(value.encoded() == ReferenceJSONWriter.encoded(value), "\(name)")
        }
        let record = Record(
            kind: .movieLocalized,
            key: "tmdb:movie:1:ko-KR \"q\" \\ \u{01}",
            fetchedAt: 1_709_294_400_000,
            data: [
                "title": .string("é \n 🎬"), "b": .null, "a": .array([.integer(-1), .number(0.5)]), "ä": .bool(true),
            ]
        )
        #expect(record.encoded() == ReferenceJSONWriter.encoded(record.json))
        let emptyRecord = Record(kind: .genre, key: "", fetchedAt: 0, data: [:])
        #expect(emptyRecord.encoded() == ReferenceJSONWriter.encoded(emptyRecord.json))
        for role in ImageJob.Role.allCases {
            let job = ImageJob(
                url: "https://image.example/t/p/original/a\"b\\c.jpg",
                owner: "tmdb:movie:1 é",
                role: role
            )
            #expect(job.encoded() == ReferenceJSONWriter.encoded(job.json))
        }
    }
}
