import MarqueeCore
import MarqueeJSON
import Testing

/// Hostile payloads against the decoders every stage runs first: random and mutated jobs and records — wrong
/// types, huge strings, negative and enormous numbers, invalid dates, control characters, SQL and HTML
/// fragments, deep nesting, flipped and truncated bytes. Each must either decode into a job that survives a
/// round trip, or be refused with a short, clear `PayloadError`; none may crash or echo megabytes back.
@Suite struct HostilePayloadTests {
    /// Values that have broken decoders elsewhere.
    static let hostileValues: [JSONValue] = [
        .null, .bool(true), .integer(-1), .integer(0), .integer(Int64.max), .integer(Int64.min), .number(1e308),
        .number(-0.0), .number(1.5), .number(Double.leastNonzeroMagnitude), .string(""), .string(" "), .string("\u{0}"),
        .string("a\u{0}b"), .string("\u{202E}evil\u{202C}"), .string("\u{1B}[2J"), .string("\r\n\t"),
        .string(String(repeating: "A", count: 200_000)), .string(String(repeating: "기", count: 5_000)),
        .string("'; DROP TABLE movies; --"), .string("<script>alert(1)</script>"), .string("../../etc/passwd"),
        .string("2024-13-45"), .string("20240230"), .string("99999999"), .string("OL0W"), .string("-5"), .string("1e9"),
        .string("%00%0d%0a"), .string("${jndi:ldap://x}"), .array([]), .array([.integer(1)]), .object([:]),
        .object(["pages": .integer(-7)]), .object(["pages": .integer(1_000_000_000)]),
    ]

    @Test func mutatedFieldsDecodeOrAreRefusedClearly() throws {
        var random = SplitMix64(seed: 0x6d61_7271_7565_6521)
        var decoded = 0
        var refused = 0
        for round in 0..<6_000 {
            let job = FetchJobTests.everyKind[round % FetchJobTests.everyKind.count]
            guard case .object(var fields) = try JSONValue.parse(job.encoded()) else {
                Issue.record("a job is not a JSON object")
                return
            }
            let keys = fields.keys.sorted() + ["extra", "follow"]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let key = keys[Int(random.next() % UInt64(keys.count))]
                switch random.next() % 10 {
                case 0: fields[key] = nil
                case 1: fields["kind"] = .string(FetchJob.kinds[Int(random.next() % UInt64(FetchJob.kinds.count))])
                default: fields[key] = Self.hostileValues[Int(random.next() % UInt64(Self.hostileValues.count))]
                }
            }
            switch Self.check(JSONValue.object(fields).encoded()) {
            case .decoded: decoded += 1
            case .refused: refused += 1
            }
        }
        // Both paths were exercised: the mutations are not all fatal, nor all harmless.
        #expect(decoded > 100 && refused > 3_000, "decoded \(decoded), refused \(refused)")
    }

    @Test func flippedTruncatedAndInsertedBytesNeverCrash() throws {
        var random = SplitMix64(seed: 42)
        for round in 0..<20_000 {
            var bytes = FetchJobTests.everyKind[round % FetchJobTests.everyKind.count].encoded()
            for _ in 0..<(1 + Int(random.next() % 4)) {
                guard !bytes.isEmpty else { break }
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.removeSubrange(index...)
                // A lone surrogate escape.
                case 2: bytes.insert(contentsOf: [0x5C, 0x75, 0x44, 0x38, 0x30, 0x30], at: index)
                default: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: index)
                }
            }
            _ = Self.check(bytes)
            _ = try? ImageJob.decode(bytes)
            _ = try? Record.decode(bytes)
        }
    }

    /// Built here, not as test arguments: a failure report would print them whole.
    static let pathological: [String] = [
        String(repeating: "[", count: 100_000),
        String(repeating: "{\"a\":", count: 50_000),
        "{\"v\":1,\"kind\":\"tmdb.search\",\"query\":\"" + String(repeating: "\\u0000", count: 10_000) + "\"}",
        "{\"v\":1,\"kind\":\"tmdb.list\",\"list\":\"popular\",\"page\":1,\"page\":2}",
        "{\"v\":1,\"kind\":\"tmdb.list\",\"list\":\"popular\",\"page\":1"
            + String(repeating: ",\"page\":2", count: 10_000) + "}",
        "{\"v\":1,\"kind\":\"tmdb.movie\",\"id\":1" + String(repeating: "0", count: 5_000) + "}",
        "{\"v\":1,\"kind\":\"tmdb.movie\",\"id\":1e999999}",
        "{\"v\":1,\"kind\":\"tmdb.genres\",\"language\":\"en-US\"}\u{0}",
    ]

    @Test(arguments: 0..<pathological.count)
    func pathologicalDocumentsAreRefused(index: Int) {
        #expect(Self.check(Array(Self.pathological[index].utf8)) == .refused, "document \(index)")
    }

    @Test func aKeyNamedTwiceIsSaidSo() throws {
        let error = try #require(throws: PayloadError.self) {
            try FetchJob.decode(Array(#"{"v":1,"kind":"tmdb.movie","id":550,"id":551}"#.utf8))
        }
        #expect(error.description == "the payload names a key twice in one object")
        let notJSON = try #require(throws: PayloadError.self) { try FetchJob.decode(Array("{".utf8)) }
        #expect(notJSON.description == "the payload is not JSON")
    }

    @Test func aByteOrderMarkIsToleratedAsFilesFromOtherEditorsHaveIt() throws {
        let job = try FetchJob.decode(Array("\u{FEFF}{\"v\":1,\"kind\":\"tmdb.genres\",\"language\":\"en-US\"}".utf8))
        #expect(job == .tmdbGenres(language: "en-US"))
    }

    @Test func hostileTextInAQueryIsKeptAsText() throws {
        // SQL and HTML are just words to search for: accepted, and encoded back as the same text.
        for query in ["'; DROP TABLE movies; --", "<script>alert(1)</script>", "Robert'); --", "\"quoted\" \\ back"] {
            let job = try FetchJob.decode(
                FetchJob.tmdbSearch(query: query, page: 1, language: "ko-KR", year: nil, follow: .none).encoded()
            )
            #expect(job == .tmdbSearch(query: query, page: 1, language: "ko-KR", year: nil, follow: .none))
        }
    }

    enum Verdict: Equatable { case decoded, refused }

    /// Decodes `bytes` as a fetch job: a decoded job must survive a round trip; a refusal must be a short message.
    static func check(_ bytes: [UInt8]) -> Verdict {
        do {
            let job = try FetchJob.decode(bytes)
            let again = try? FetchJob.decode(job.encoded())
            #expect(
                again == job,
                "a decoded job survives a round trip: \(String(decoding: job.encoded().prefix(200), as: UTF8.self))"
            )
            #expect(job.encoded().count < 20_000)
            return .decoded
        } catch {
            #expect(!error.description.isEmpty)
            #expect(error.description.count <= 400, "errors do not echo the input: \(error.description.prefix(120))…")
            return .refused
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing case can be replayed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
