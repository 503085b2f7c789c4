public import MarqueeJSON

/// A job for the image stage: download one image, store its variants, link it to its owner (docs/design.md, "Payloads").
public struct ImageJob: Hashable, Sendable {
    /// What the image is to its owner.
    public enum Role: String, Hashable, Sendable, CaseIterable {
        case poster
        case backdrop
        case cover
    }

    /// The image's source URL (`http` or `https`).
    public var url: String
    /// The owning entity's key, e.g. `tmdb:movie:550`.
    public var owner: String
    public var role: Role

    public static let kind = "image"

    public init(url: String, owner: String, role: Role) {
        self.url = url
        self.owner = owner
        self.role = role
    }

    /// One download per URL.
    public var dedupeKey: String { "image:\(self.url)" }

    /// - Throws: A ``PayloadError`` naming the wrong field.
    public static func decode(_ bytes: some Collection<UInt8>) throws(PayloadError) -> ImageJob {
        try Self.decode(json: try JSONValue.parse(bytes))
    }

    /// The job in a parsed payload, checked as ``decode(_:)`` checks it.
    ///
    /// - Throws: A ``PayloadError`` naming the wrong field.
    public static func decode(json: JSONValue) throws(PayloadError) -> ImageJob {
        var reader = try PayloadReader(json)
        let version = try reader.int("v", in: 0...Int64.max)
        guard version == FetchJob.version else {
            throw PayloadError(.unsupportedVersion, field: "v", "version \(version) is not supported")
        }
        let kind = try reader.string("kind", maxLength: 64)
        guard kind == Self.kind else {
            throw PayloadError(.unknownKind, field: "kind", "expected 'image', got '\(kind.prefix(64))'")
        }
        let job = ImageJob(
            url: try reader.string(
                "url",
                maxLength: FieldRules.imageURLLength,
                check: Self.isHTTPURL,
                expected: FieldRules.imageURLExpected
            ),
            owner: try reader.string("owner", maxLength: FieldRules.imageOwnerLength),
            role: Role(
                rawValue: try reader.string(
                    "role",
                    check: { Role(rawValue: $0) != nil },
                    expected: "poster, backdrop or cover"
                )
            )!
        )
        try reader.finish()
        return job
    }

    /// The job if it passes ``decode(json:)`` of its ``json`` (what the image stage will check), with the same
    /// error otherwise, without building and reading that object: version, kind and role always pass, so only
    /// the URL and the owner are checked, in that order, as the reader checks them (make bench-fetch).
    ///
    /// - Throws: The ``PayloadError`` ``decode(json:)`` would throw.
    public func checked() throws(PayloadError) -> ImageJob {
        try PayloadReader.check(
            self.url,
            field: "url",
            maxLength: FieldRules.imageURLLength,
            check: Self.isHTTPURL,
            expected: FieldRules.imageURLExpected
        )
        try PayloadReader.check(self.owner, field: "owner", maxLength: FieldRules.imageOwnerLength)
        return self
    }

    static func isHTTPURL(_ value: String) -> Bool {
        // An ASCII URL (every URL an adapter builds) is checked byte by byte: each byte is a character there
        // ("\r\n", the one ASCII character of two scalars, is whitespace either way), and the whitespace
        // characters are tab to carriage return and space. The same verdict as the character-wise check below,
        // without a lowercased copy and Unicode property lookups per character (make bench-fetch).
        let utf8 = value.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            func lowered(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
            let scheme: Int
            if utf8.count >= 8, zip(utf8.prefix(8), "https://".utf8).allSatisfy({ lowered($0) == $1 }) {
                scheme = 8
            } else if utf8.count >= 7, zip(utf8.prefix(7), "http://".utf8).allSatisfy({ lowered($0) == $1 }) {
                scheme = 7
            } else {
                return false
            }
            let rest = utf8.dropFirst(scheme)
            return !rest.isEmpty && rest.first != UInt8(ascii: "/")
                && !utf8.contains(where: { $0 == 0x20 || (0x09...0x0D).contains($0) })
        }
        return self.isHTTPURLCharacterwise(value)
    }

    /// ``isHTTPURL(_:)``, character by character.
    static func isHTTPURLCharacterwise(_ value: String) -> Bool {
        let lower = value.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return false }
        let rest = lower.drop(while: { $0 != "/" }).dropFirst(2)
        return !rest.isEmpty && !rest.hasPrefix("/") && !value.contains(where: { $0.isWhitespace })
    }

    public var json: JSONValue {
        .object([
            "v": .integer(FetchJob.version), "kind": .string(Self.kind), "url": .string(self.url),
            "owner": .string(self.owner), "role": .string(self.role.rawValue),
        ])
    }

    /// The payload bytes: ``json`` encoded, written member by member in sorted key order without building the
    /// object (the same bytes).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter.object(capacity: 64 + self.url.utf8.count + self.owner.utf8.count)
        writer.write("kind", Self.kind)
        writer.write("owner", self.owner)
        writer.write("role", self.role.rawValue)
        writer.write("url", self.url)
        writer.write("v", FetchJob.version)
        writer.endObject()
        return writer.finish()
    }
}
