public import MarqueeJSON

/// A record for the index stage: one entity as fetched, typed by `kind` (docs/design.md, "Payloads").
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
        /// A movie as KOFIC's movie list shows it (the catalogue), without the details of ``koficMovie``.
        case koficCatalogue = "kofic.catalogue"
        /// A signed-in TMDB account's details (`/account`), keyed by the account's label.
        case tmdbAccount = "tmdb.account"
        /// A movie on a signed-in TMDB account's list: rated (with the user's rating), favourite or watchlist.
        case tmdbAccountMovie = "tmdb.account.movie"
        /// How many entries one list of a signed-in TMDB account held at one refresh (page 1's `total_results`).
        case tmdbAccountRefresh = "tmdb.account.refresh"
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
    /// The entity's fields. A record made from written data reads them from its bytes on each use (tests and
    /// tools do; the fetch stage only writes the record).
    public var data: JSONObject {
        get {
            switch self.storage {
            case .object(let object): return object
            case .written(var writer):
                // An object by construction, once closed.
                writer.endObject()
                guard case .object(let object)? = JSONDocument.parse(writer.finish()) else {
                    preconditionFailure("a record's written data is not a JSON object")
                }
                return object
            }
        }
        set { self.storage = .object(newValue) }
    }

    /// The data as built, or as a parser wrote it (a ``JSONWriter`` with the object still open: closing it
    /// where the record is made could copy its bytes, while the parser's variable still holds them).
    private enum Storage: Sendable {
        case object(JSONObject)
        case written(JSONWriter)
    }

    private var storage: Storage

    public init(kind: Kind, key: String, fetchedAt: Int64, data: JSONObject) {
        self.kind = kind
        self.key = key
        self.fetchedAt = fetchedAt
        self.storage = .object(data)
    }

    /// A record whose data a parser wrote directly: the payload takes its bytes as they are, without building
    /// the object (the fetch stage's records).
    ///
    /// - Parameter writtenData: A writer of ``JSONWriter/object(capacity:)`` with the data's members written,
    ///   the object not closed.
    public init(kind: Kind, key: String, fetchedAt: Int64, writtenData: consuming JSONWriter) {
        precondition(writtenData.depth == 1, "a record's written data is one object, left open")
        self.kind = kind
        self.key = key
        self.fetchedAt = fetchedAt
        self.storage = .written(writtenData)
    }

    /// Equal when kind, key, time and data are, however the data was made.
    public static func == (lhs: Record, rhs: Record) -> Bool {
        guard lhs.kind == rhs.kind, lhs.key == rhs.key, lhs.fetchedAt == rhs.fetchedAt else { return false }
        if case .written(let left) = lhs.storage, case .written(let right) = rhs.storage, left.bytes == right.bytes {
            return true
        }
        return lhs.data == rhs.data
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.kind)
        hasher.combine(self.key)
        hasher.combine(self.fetchedAt)
        hasher.combine(self.data)
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
                .unknownKind,
                field: "kind",
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

    /// The payload bytes: ``json`` encoded, written member by member in sorted key order without building the
    /// object (the same bytes).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        self.write(to: &writer)
        return writer.finish()
    }

    /// Writes ``encoded()``'s bytes (a caller writing many records can reuse one writer's buffer).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("data")
        switch self.storage {
        case .object(let object): writer.write(object: object)
        case .written(let data): writer.write(openObject: data)
        }
        writer.write("fetched_at", self.fetchedAt)
        writer.write("key", self.key)
        writer.write("kind", self.kind.rawValue)
        writer.write("v", FetchJob.version)
        writer.endObject()
    }
}
