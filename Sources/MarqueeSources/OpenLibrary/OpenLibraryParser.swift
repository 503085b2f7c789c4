import MarqueeCore
import MarqueeJSON

/// Builds the records and follow-ups of Open Library responses (docs/records.md).
struct OpenLibraryParser {
    let configuration: SourceConfiguration
    let fetchedAt: Int64
    var result = SourceResult()

    /// At most this many ISBNs go into a record.
    static let maxISBNs = 20
    /// At most this many subjects go into a record.
    static let maxSubjects = 50
    /// At most this many languages go into a record.
    static let maxLanguages = 20

    init(configuration: SourceConfiguration, fetchedAt: Int64) {
        self.configuration = configuration
        self.fetchedAt = fetchedAt
    }

    /// The entity a search doc's `key` names. Some docs carry an edition key under `/works/` (`/works/OL…M`, an
    /// edition without a work); they become `openlibrary:edition:OL…M` books, never a made-up work.
    enum DocKey {
        case work(String)
        case edition(String)

        init?(_ key: String) {
            let id = key.split(separator: "/").last.map(String.init) ?? ""
            guard id.hasPrefix("OL"), id.count > 3, id.dropFirst(2).dropLast().allSatisfy({ $0.isASCII && $0.isNumber })
            else { return nil }
            switch id.last {
            case "W": self = .work(id)
            case "M": self = .edition(id)
            default: return nil
            }
        }

        var recordKey: String {
            switch self {
            case .work(let id): "openlibrary:work:\(id)"
            case .edition(let id): "openlibrary:edition:\(id)"
            }
        }
    }

    /// A work id `OL…W` from `/works/OL…W` (or the bare id).
    static func workID(_ key: String) -> String? {
        guard case .work(let id) = DocKey(key) else { return nil }
        return id
    }

    // MARK: - Search

    /// `book` records of search docs, and each doc's follow-ups.
    mutating func search(_ docs: [JSONValue], follow: Follow) {
        for doc in docs {
            guard let rawKey = doc["key"]?.trimmedText, let key = DocKey(rawKey) else {
                self.result.skipped.append(
                    "search doc without a work or edition key: \(doc["key"]?.trimmedText ?? "none")"
                )
                continue
            }
            let names = (doc["author_name"]?.arrayValue ?? []).map(\.trimmedText)
            let keys = (doc["author_key"]?.arrayValue ?? []).map(\.trimmedText)
            let authors: [JSONValue] = (0..<max(names.count, keys.count)).compactMap { index in
                let name = index < names.count ? names[index] : nil
                let key = index < keys.count ? keys[index] : nil
                guard name != nil || key != nil else { return nil }
                return .object(["name": .of(name), "key": .of(key)])
            }
            let coverID = Self.coverID(doc["cover_i"])
            var data: JSONObject = [
                "title": .of(doc["title"]?.trimmedText),
                "authors": .array(authors),
                "first_publish_year": .of(doc["first_publish_year"]?.int),
                "isbn": .of(Self.bounded(doc["isbn"], Self.maxISBNs)),
                "cover_id": .of(coverID),
                "subjects": .of(Self.bounded(doc["subject"], Self.maxSubjects)),
                "languages": .of(Self.bounded(doc["language"], Self.maxLanguages)),
                "edition_count": .of(doc["edition_count"]?.int),
            ]
            switch key {
            case .work(let id):
                data["work_id"] = .string(id)
                data["edition_id"] = .null
            case .edition(let id):
                data["work_id"] = .null
                data["edition_id"] = .string(id)
            }
            self.result.records.append(Record(kind: .book, key: key.recordKey, fetchedAt: self.fetchedAt, data: data))
            switch key {
            case .work(let id) where follow.details:
                // The work job queues the cover.
                self.result.add(.openLibraryWork(id: id, follow: FanOut.detailFollow(follow)))
            default:
                if follow.images, let coverID { self.cover(coverID, owner: key.recordKey) }
            }
        }
    }

    // MARK: - Works

    /// The `book` record of a work, and its cover.
    mutating func work(_ json: JSONValue, id: String, follow: Follow) {
        let covers = (json["covers"]?.arrayValue ?? []).compactMap { Self.coverID($0) }
        let authorKeys = (json["authors"]?.arrayValue ?? []).compactMap { author -> String? in
            guard let key = author["author"]?["key"]?.trimmedText ?? author["key"]?.trimmedText else { return nil }
            return key.split(separator: "/").last.map(String.init)
        }
        let description = json["description"]?.text ?? json["description"]?["value"]?.text
        let data: JSONObject = [
            "work_id": .string(id),
            "title": .of(json["title"]?.trimmedText),
            "description": .of(description),
            "author_keys": .of(authorKeys),
            "first_publish_date": .of(json["first_publish_date"]?.trimmedText),
            "subjects": .of(Self.bounded(json["subjects"], Self.maxSubjects)),
            "covers": .of(covers),
            "cover_id": .of(covers.first),
        ]
        self.result.records.append(
            Record(kind: .book, key: "openlibrary:work:\(id)", fetchedAt: self.fetchedAt, data: data)
        )
        if follow.images, let cover = covers.first { self.cover(cover, owner: "openlibrary:work:\(id)") }
    }

    // MARK: - Values

    private mutating func cover(_ id: Int64, owner: String) {
        let url = "\(self.configuration.openLibraryCoversBaseURL)/b/id/\(id)-L.jpg"
        self.result.add(ImageJob(url: url, owner: owner, role: .cover))
    }

    /// A cover id; Open Library writes `-1` (and sometimes null) for "no cover".
    static func coverID(_ value: JSONValue?) -> Int64? {
        guard let id = value?.int, id > 0 else { return nil }
        return id
    }

    /// The first `limit` distinct non-blank strings of an array.
    static func bounded(_ value: JSONValue?, _ limit: Int) -> [String] {
        var seen: Set<String> = []
        var strings: [String] = []
        for element in value?.arrayValue ?? [] {
            guard strings.count < limit else { break }
            guard let string = element.trimmedText, seen.insert(string).inserted else { continue }
            strings.append(string)
        }
        return strings
    }
}
