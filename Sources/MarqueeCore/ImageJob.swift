/// A job for the image stage: download one image, store its variants, link it to its owner (DESIGN §3).
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
        guard kind == Self.kind else { throw PayloadError(.unknownKind, field: "kind", "expected 'image', got '\(kind.prefix(64))'") }
        let job = ImageJob(
            url: try reader.string("url", maxLength: 2048, check: Self.isHTTPURL, expected: "an http or https URL"),
            owner: try reader.string("owner", maxLength: 200),
            role: Role(rawValue: try reader.string("role", check: { Role(rawValue: $0) != nil }, expected: "poster, backdrop or cover"))!
        )
        try reader.finish()
        return job
    }

    static func isHTTPURL(_ value: String) -> Bool {
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

    public func encoded() -> [UInt8] { self.json.encoded() }
}

/// A record for the index stage: one entity as fetched, typed by `kind` (DESIGN §3).
///
/// The record's `data` belongs to its kind's schema (the store validates it); the envelope checked here is what
/// every record shares: its natural `key` and the time it was fetched, so a newer version wins and an older
/// one is ignored.
public struct Record: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case movie
        case movieLocalized = "movie.localized"
        case genre
        case review
        case boxOfficeEntry = "boxoffice.entry"
        case koficMovie = "kofic.movie"
        case book
        case image
        /// What became of one job (``JobOutcome``): lineage, not an entity.
        case jobOutcome = "job.outcome"
    }

    public var kind: Kind
    /// The entity's natural key, e.g. `tmdb:movie:550`.
    public var key: String
    /// When the data was fetched, in milliseconds since the epoch.
    public var fetchedAt: Int64
    public var data: [String: JSONValue]

    public init(kind: Kind, key: String, fetchedAt: Int64, data: [String: JSONValue]) {
        self.kind = kind
        self.key = key
        self.fetchedAt = fetchedAt
        self.data = data
    }

    public var dedupeKey: String { "\(self.kind.rawValue):\(self.key)" }

    /// - Throws: A ``PayloadError`` naming the wrong field.
    public static func decode(_ bytes: some Collection<UInt8>) throws(PayloadError) -> Record {
        var reader = try PayloadReader(try JSONValue.parse(bytes))
        let version = try reader.int("v", in: 0...Int64.max)
        guard version == FetchJob.version else {
            throw PayloadError(.unsupportedVersion, field: "v", "version \(version) is not supported")
        }
        let kindName = try reader.string("kind", maxLength: 64)
        guard let kind = Kind(rawValue: kindName) else {
            throw PayloadError(
                .unknownKind, field: "kind",
                "unknown record kind '\(kindName.prefix(64))'; expected one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let record = Record(
            kind: kind,
            key: try reader.string("key", maxLength: 500),
            fetchedAt: try reader.int("fetched_at", in: 0...4_102_444_800_000),
            data: try reader.rawObject("data")
        )
        try reader.finish()
        return record
    }

    public var json: JSONValue {
        .object([
            "v": .integer(FetchJob.version), "kind": .string(self.kind.rawValue), "key": .string(self.key),
            "fetched_at": .integer(self.fetchedAt), "data": .object(self.data),
        ])
    }

    public func encoded() -> [UInt8] { self.json.encoded() }
}
