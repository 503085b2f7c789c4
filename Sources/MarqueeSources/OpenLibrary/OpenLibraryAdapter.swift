public import MarqueeCore

/// The adapter for Open Library: search and works; covers come from Open Library Covers.
///
/// Open Library needs no key but asks clients to identify themselves, so every request carries the configured
/// `User-Agent`. See docs/records.md for the records and follow-ups.
public struct OpenLibraryAdapter: SourceAdapter {
    /// The base URLs and user agent.
    public let configuration: SourceConfiguration
    /// The fields a search asks for.
    public static let searchFields =
        "key,title,author_name,author_key,first_publish_year,cover_i,isbn,language,subject,edition_count"
    /// The last page a search job may name (``FetchJob`` accepts 1…1000).
    public static let maxPage: Int64 = 1000

    /// Creates the adapter.
    ///
    /// - Parameter configuration: The source configuration; only the Open Library values are used.
    public init(configuration: SourceConfiguration) {
        self.configuration = configuration
        self.check = ResponseCheck(source: .openLibrary, secrets: configuration.secrets)
    }

    /// How answers are checked (made once: it lists the configured keys, to keep them out of error texts).
    let check: ResponseCheck

    /// The request for an `openlibrary.*` job.
    ///
    /// - Throws: A ``SourceError`` when the job is not an Open Library job.
    public func request(for job: FetchJob) throws(SourceError) -> SourceRequest {
        let path: [String]
        var query: [QueryItem] = []
        switch job {
        case .openLibrarySearch(let text, let page, let limit, _):
            path = ["search.json"]
            query = [
                QueryItem("q", text), QueryItem("page", String(page)), QueryItem("limit", String(limit)),
                QueryItem("fields", Self.searchFields),
            ]
        case .openLibraryWork(let id, _):
            path = ["works", "\(id).json"]
        default:
            throw SourceError(
                .invalidConfiguration,
                source: .openLibrary,
                "a \(job.kind) job is not an Open Library job"
            )
        }
        return .json(
            .openLibrary,
            base: self.configuration.openLibraryBaseURL,
            path: path,
            query: query,
            userAgent: self.configuration.userAgent
        )
    }

    /// The records and follow-ups of an Open Library response.
    ///
    /// - Throws: A ``SourceError``: 429 rate limited, 5xx unavailable, 404 or a deleted work not found, other 4xx
    ///   bad request, a success body of another shape malformed.
    public func parse(
        _ response: SourceResponse,
        for job: FetchJob,
        fetchedAt: Int64
    ) throws(SourceError) -> SourceResult {
        try self.check.transient(response, fetchedAt: fetchedAt)
        let json = self.check.json(response)
        try self.check.status(response, message: json?["error"]?.trimmedText)
        guard let json, json.objectValue != nil else { throw self.check.malformed(response, "a JSON object") }
        var parser = OpenLibraryParser(configuration: self.configuration, fetchedAt: fetchedAt)
        switch job {
        case .openLibrarySearch(_, let page, let limit, let follow):
            guard let docs = json["docs"]?.arrayValue else { throw self.check.malformed(response, "search docs") }
            parser.search(docs, follow: follow)
            if let found = json["numFound"]?.int ?? json["num_found"]?.int, limit > 0 {
                let totalPages = (found + limit - 1) / limit
                for next in FanOut.pages(page: page, follow: follow, totalPages: totalPages, maxPage: Self.maxPage) {
                    parser.result.add(
                        .openLibrarySearch(query: job.openLibraryQuery, page: next, limit: limit, follow: follow)
                    )
                }
            }
        case .openLibraryWork(let id, let follow):
            let type = json["type"]?["key"]?.trimmedText
            if type == "/type/delete" {
                throw SourceError(.notFound, source: .openLibrary, "work \(id) was deleted", status: response.status)
            }
            if type == "/type/redirect" {
                guard let target = json["location"]?.trimmedText.flatMap(OpenLibraryParser.workID) else {
                    throw self.check.malformed(response, "a redirect to a work")
                }
                parser.result.add(.openLibraryWork(id: target, follow: follow))
                return parser.result
            }
            guard let key = json["key"]?.trimmedText, OpenLibraryParser.workID(key) == id else {
                throw self.check.malformed(response, "work \(id)")
            }
            parser.work(json, id: id, follow: follow)
        default:
            throw SourceError(
                .invalidConfiguration,
                source: .openLibrary,
                "a \(job.kind) job is not an Open Library job"
            )
        }
        return parser.result
    }
}

extension FetchJob {
    /// The query of an Open Library search job.
    fileprivate var openLibraryQuery: String {
        if case .openLibrarySearch(let query, _, _, _) = self { return query }
        return ""
    }
}
