import Foundation
import MarqueeImageStore
import Testing

@Suite struct ImageKeyTests {
    static let hash = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    @Test func originalAndVariantKeysFanOutOnTheHashPrefix() {
        let original = ImageKey.original(sha256: Self.hash)
        #expect(original.rawValue == "ba/78/\(Self.hash)/original")
        #expect(original.description == original.rawValue)
        #expect(original.sha256 == Self.hash)
        let variant = ImageKey.variant(sha256: Self.hash, width: 342, format: "webp")
        #expect(variant.rawValue == "ba/78/\(Self.hash)/342.webp")
        #expect(variant.sha256 == Self.hash)
        #expect(ImageKey.original(sha256: Self.hash.uppercased()) == original, "hex digits are lowercased")
        #expect(ImageKey.variant(sha256: Self.hash, width: 92, format: "JPG").rawValue.hasSuffix("/92.jpg"))
    }

    @Test func parsesOnlyWellFormedKeys() {
        #expect(ImageKey(rawValue: "ba/78/\(Self.hash)/original") == .original(sha256: Self.hash))
        #expect(
            ImageKey(rawValue: "ba/78/\(Self.hash)/500.webp") == .variant(sha256: Self.hash, width: 500, format: "webp")
        )
        let bad = [
            "", "original", "ba/78/\(Self.hash)", "ab/78/\(Self.hash)/original", "ba/79/\(Self.hash)/original",
            "ba/78/\(Self.hash.uppercased())/original", "ba/78/\(Self.hash)/0.webp", "ba/78/\(Self.hash)/042.webp",
            "ba/78/\(Self.hash)/342", "ba/78/\(Self.hash)/342.we/bp", "ba/78/\(Self.hash)/../original",
            "/ba/78/\(Self.hash)/original", "ba/78/\(Self.hash)/342.WEBP", "ba/78/\(Self.hash.dropLast())/original",
        ]
        for raw in bad { #expect(ImageKey(rawValue: raw) == nil, "\(raw)") }
    }

    @Test func codesAsItsRawString() throws {
        let key = ImageKey.variant(sha256: Self.hash, width: 342, format: "webp")
        let data = try JSONEncoder().encode([key])
        #expect(String(decoding: data, as: UTF8.self) == "[\"ba\\/78\\/\(Self.hash)\\/342.webp\"]")
        #expect(try JSONDecoder().decode([ImageKey].self, from: data) == [key])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ImageKey].self, from: Data(#"["../etc/passwd"]"#.utf8))
        }
    }
}

@Suite struct ContentHashTests {
    // FIPS 180-2 / NIST test vectors.
    @Test func matchesKnownSHA256Vectors() {
        #expect(ContentHash.sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(ContentHash.sha256Hex(Array("abc".utf8)) == ImageKeyTests.hash)
        #expect(
            ContentHash.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        #expect(
            ContentHash.sha256Hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test func deadLetterKeysKeepTheTopicNameAndRefuseAnythingElse() {
        #expect(
            ImageKey.deadLetter("dlq/Marquee_test-1.fetch/3/1048576")?.rawValue == "dlq/Marquee_test-1.fetch/3/1048576"
        )
        for name in [
            "dlq/marquee.fetch/3", "dlq/marquee.fetch/3/x", "dlq/../3/4", "dlq/./3/4", "dlq/a b/3/4", "dlq/a/b/3/4",
            "dlq//3/4", "dlq/marquee.fetch/-3/4", "/dlq/t/3/4", "images/t/3/4", "dlq/t/3/4/", "dlq/tö/3/4",
            "dlq/\(String(repeating: "t", count: 250))/3/4",
        ] {
            #expect(ImageKey.deadLetter(name) == nil, "\(name)")
        }
    }
}
