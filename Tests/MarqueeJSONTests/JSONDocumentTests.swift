import Testing

@testable import MarqueeJSON

/// A `JSONDocument` accepts and refuses exactly what the reference reader (``ReferenceStrictJSON``) does, and
/// reads the same values.
@Suite struct JSONDocumentTests {
    /// The document's reading of `bytes`, as a `JSONValue`; `nil` when it refuses them.
    static func reading(_ bytes: [UInt8]) -> JSONValue? { JSONDocument(bytes)?.root.jsonValue }

    @Test func readsEveryFixtureAndItsPrefixesAsTheReferenceDoes() throws {
        var read = 0
        for (name, bytes) in try JSONReaderEquivalenceTests.fixtures() {
            // (A hand-edited sample with a trailing comma is refused by both.)
            let expected = ReferenceStrictJSON.parse(bytes)
            #expect(Self.reading(bytes) == expected, "\(name)")
            if expected != nil { read += 1 }
            // Cut short anywhere: refused, or (a number cut at a digit) read the same.
            var differing: [Int] = []
            for end in stride(from: 0, to: bytes.count, by: bytes.count < 3000 ? 3 : 41) {
                let prefix = Array(bytes[..<end])
                if Self.reading(prefix) != ReferenceStrictJSON.parse(prefix) { differing.append(end) }
            }
            #expect(differing.isEmpty, "\(name) cut at \(differing.prefix(10))")
        }
        #expect(read > 20, "the fixtures were read")
    }

    @Test func readsEveryEdgeDocumentAsTheReferenceDoes() {
        for bytes in JSONReaderEquivalenceTests.edgeDocuments {
            #expect(
                Self.reading(bytes) == ReferenceStrictJSON.parse(bytes),
                "\(String(decoding: bytes, as: UTF8.self).debugDescription)"
            )
        }
    }

    /// Every two-byte sequence, and three- and four-byte sequences around each boundary of well-formed UTF-8,
    /// in a string and outside one: refused exactly when the reference (`String(validating:)`) refuses them.
    @Test func validatesUTF8AsTheReferenceDoes() {
        var sequences: [[UInt8]] = []
        for first in UInt8(0x80)...0xFF {
            for second in UInt8(0)...0xFF { sequences.append([first, second]) }
        }
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
        for first in UInt8(0xE0)...0xFF {
            for second in edges {
                for third in edges {
                    sequences.append([first, second, third])
                    for fourth in edges where first >= 0xF0 { sequences.append([first, second, third, fourth]) }
                }
            }
        }
        var differing: [[UInt8]] = []
        var accepted = 0
        for sequence in sequences {
            for document in [[0x22] + sequence + [0x22], [0x22, 0x61] + sequence + [0x62, 0x22], sequence] {
                let reading = Self.reading(document)
                if reading != ReferenceStrictJSON.parse(document) { differing.append(document) }
                if reading != nil { accepted += 1 }
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(20))")
        #expect(accepted > 1000, "well-formed sequences are among them")
    }

    /// Random strings of quotes, escapes, control and multi-byte bytes, in a string and in an object's key.
    @Test func readsRandomStringsAsTheReferenceDoes() {
        let alphabet: [[UInt8]] = [
            [0x61], [0x20], [0x22], [0x5C], [0x5C, 0x6E], [0x5C, 0x75, 0x30, 0x30, 0x34, 0x31],
            [0x5C, 0x75, 0x44, 0x38, 0x33, 0x43],
            [0x5C, 0x75, 0x44, 0x46, 0x41, 0x43], [0x5C, 0x2F], [0x5C, 0x78], [0x01], [0x7F], [0xC3, 0xA9], [0xC3],
            [0xA9],
            [0xE4, 0xB8, 0xAD], [0xF0, 0x9F, 0x8E, 0xAC], [0xED, 0xA0, 0x80], [0x3A], [0x2C], [0x7B], [0x7D],
        ]
        var generator = SystemRandomNumberGenerator()
        var differing: [[UInt8]] = []
        var accepted = 0
        for _ in 0..<5000 {
            var text: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) { text += alphabet.randomElement(using: &generator)! }
            for document in [[0x22] + text + [0x22], Array("{\"".utf8) + text + Array("\":1}".utf8)] {
                let reading = Self.reading(document)
                if reading != ReferenceStrictJSON.parse(document) { differing.append(document) }
                if reading != nil { accepted += 1 }
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(20))")
        #expect(accepted > 500, "valid strings are among them")
    }

    @Test func findsMembersAsAnObjectDoes() throws {
        let document = try #require(
            JSONDocument(
                Array(
                    """
                    {"id": 7, "nested": {"id": 8, "list": [1, {"id": 9}]}, "\\u0074itle": "escaped key", "none": null,
                     "dup": 1, "list": [true, "x", 2.5, [], {}], "dup": 2, "é": "accent"}
                    """.utf8
                )
            )
        )
        let root = document.root
        #expect(root.kind == .object)
        #expect(root[member: "id"]?.scalar == .integer(7), "a member after a nested object is found past it")
        #expect(root[member: "nested"]?[member: "list"]?.elements?.count == 2)
        #expect(root[member: "title"]?.string == "escaped key", "an escaped key is compared decoded")
        #expect(root[member: "none"]?.kind == .null)
        #expect(root[member: "missing"] == nil)
        #expect(root[member: "dup"]?.scalar == .integer(2), "the last of a key named twice")
        #expect(root[member: "é"]?.string == "accent")
        #expect(root[member: "id"]?[member: "id"] == nil, "not an object")
        #expect(root.elements == nil)
        let list = try #require(root[member: "list"]?.elements)
        #expect(list.map(\.kind) == [.bool, .string, .number, .array, .object])
        #expect(list.map(\.jsonValue) == [.bool(true), .string("x"), .number(2.5), .array([]), .object([:])])
        #expect(root.members?.map(\.key) == ["id", "nested", "title", "none", "dup", "list", "dup", "é"])
        #expect(root.jsonValue == ReferenceStrictJSON.parse(document.bytes))
    }
}

extension JSONDocumentTests {
    /// Keys alike in their first seven bytes or their length, up to and past the fingerprint's 255.
    @Test func tellsKeysApartPastTheirFingerprints() throws {
        let keys = [
            "", "a", "abcdefg", "abcdefgh", "abcdefgi", "abcdefghi", String(repeating: "k", count: 255),
            String(repeating: "k", count: 256), String(repeating: "k", count: 300) + "x",
            String(repeating: "k", count: 300) + "y",
        ]
        var text = "{"
        for (index, key) in keys.enumerated() { text += (index > 0 ? "," : "") + "\"\(key)\":\(index)" }
        let document = try #require(JSONDocument(Array((text + "}").utf8)))
        for (index, key) in keys.enumerated() {
            #expect(
                document.root[member: key]?.scalar == .integer(Int64(index)),
                "\(key.prefix(12))… (\(key.utf8.count) bytes)"
            )
        }
        #expect(document.root[member: "abcdef"] == nil)
        #expect(document.root[member: String(repeating: "k", count: 257)] == nil)
        #expect(document.root[member: String(repeating: "k", count: 300) + "z"] == nil)
    }
}

extension JSONDocumentTests {
    /// A key named twice keeps its last value however the object lets a lookup stop early: a small object, one
    /// past 32 members, an escaped spelling of the key, keys alike in their first bytes.
    @Test(arguments: [3, 31, 32, 33, 60])
    func aRepeatedKeyKeepsItsLastValue(members: Int) throws {
        var parts = (0..<members).map { "\"key\($0)\":\($0)" }
        parts.insert("\"title\":\"first\"", at: members / 2)
        parts.append("\"titles\":\"other\"")
        parts.append("\"title\":\"last\"")
        let plain = try #require(JSONDocument(Array(("{" + parts.joined(separator: ",") + "}").utf8)))
        #expect(plain.root[member: "title"]?.string == "last")
        #expect(plain.root[member: "titles"]?.string == "other")
        #expect(plain.root[member: "key0"]?.scalar == .integer(0))

        parts[parts.count - 1] = "\"t\\u0069tle\":\"escaped last\""
        let escaped = try #require(JSONDocument(Array(("{" + parts.joined(separator: ",") + "}").utf8)))
        #expect(escaped.root[member: "title"]?.string == "escaped last")
        #expect(escaped.root.jsonValue == ReferenceStrictJSON.parse(escaped.bytes))

        parts.removeLast()
        let once = try #require(JSONDocument(Array(("{" + parts.joined(separator: ",") + "}").utf8)))
        #expect(once.root[member: "title"]?.string == "first")
        #expect(once.root[member: "key\(members - 1)"]?.scalar == .integer(Int64(members - 1)))
    }
}
