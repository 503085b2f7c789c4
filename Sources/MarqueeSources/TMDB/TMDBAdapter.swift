public import MarqueeCore
import MarqueeJSON

/// The adapter for TMDB API v3: lists, search, movie details, reviews, genres and the movie change feed.
///
/// Requests authenticate with the `api_key` query parameter. See docs/records.md for the records and
/// follow-ups each job kind yields.
public struct TMDBAdapter: SourceAdapter {
    /// The base URLs, key and user agent.
    public let configuration: SourceConfiguration
    /// The last page TMDB serves for lists and search.
    public static let maxPage: Int64 = 500

    /// Creates the adapter.
    ///
    /// - Parameter configuration: The source configuration; only the TMDB values are used.
    public init(configuration: SourceConfiguration) {
        self.configuration = configuration
        self.check = ResponseCheck(source: .tmdb, secrets: configuration.secrets)
    }

    /// How answers are checked (made once: it lists the configured keys, to keep them out of error texts).
    let check: ResponseCheck

    /// The request for a `tmdb.*` job.
    ///
    /// - Throws: A ``SourceError`` when no TMDB key is configured or the job is not a TMDB job.
    public func request(for job: FetchJob) throws(SourceError) -> SourceRequest {
        switch job {
        case .tmdbList(let list, let page, let language, let region, _):
            var query = [QueryItem("language", language), QueryItem("page", String(page))]
            if let region { query.append(QueryItem("region", region)) }
            return try self.request(path: ["movie", list.rawValue], query: query)
        case .tmdbSearch(let text, let page, let language, let year, _):
            var query = [QueryItem("query", text), QueryItem("language", language), QueryItem("page", String(page))]
            if let year { query.append(QueryItem("year", String(year))) }
            query.append(QueryItem("include_adult", "false"))
            return try self.request(path: ["search", "movie"], query: query)
        case .tmdbMovie(let id, let language, let follow):
            var query = [QueryItem("language", language)]
            var append: [String] = []
            if follow.reviews { append.append("reviews") }
            if follow.images { append.append("images") }
            if !append.isEmpty { query.append(QueryItem("append_to_response", append.joined(separator: ","))) }
            if follow.images {
                let prefix = language.prefix(while: { $0 != "-" })
                query.append(QueryItem("include_image_language", "\(prefix),null"))
            }
            return try self.request(path: ["movie", String(id)], query: query)
        case .tmdbReviews(let id, let page, let language, _):
            return try self.request(
                path: ["movie", String(id), "reviews"],
                query: [QueryItem("language", language), QueryItem("page", String(page))]
            )
        case .tmdbGenres(let language):
            return try self.request(path: ["genre", "movie", "list"], query: [QueryItem("language", language)])
        case .tmdbChanges(let start, let end, let page, _, _):
            return try self.request(
                path: ["movie", "changes"],
                query: [QueryItem("start_date", start), QueryItem("end_date", end), QueryItem("page", String(page))]
            )
        case .tmdbAccount(let account):
            switch try self.credential(of: account) {
            case .session(let session):
                return try self.accountRequest(session: session, path: ["account"], query: [])
            case .accessToken(let token, let objectID):
                // v4 has no account details: the account's own lists answer for the token, and name nothing more.
                return try self.accountRequest(
                    token: token,
                    path: ["account", objectID, "lists"],
                    query: [QueryItem("page", "1")]
                )
            }
        case .tmdbAccountList(let account, let accountID, let list, let page, _):
            let query = [QueryItem("page", String(page)), QueryItem("sort_by", "created_at.asc")]
            switch (try self.credential(of: account), accountID) {
            case (.session(let session), .number(let number)):
                return try self.accountRequest(
                    session: session,
                    path: ["account", String(number), list.rawValue, "movies"],
                    query: query
                )
            case (.accessToken(let token, let objectID), .object(let jobObjectID)) where jobObjectID == objectID:
                return try self.accountRequest(
                    token: token,
                    path: ["account", objectID, "movie", list.v4Path],
                    query: query
                )
            case (.session, .object), (.accessToken, .number), (.accessToken, .object):
                throw SourceError(
                    .badRequest,
                    source: .tmdb,
                    "the job names the account '\(account)' as another sign-in did (it was queued before the account's session or access token changed); enqueue tmdb-account for it again"
                )
            }
        default:
            throw SourceError(.invalidConfiguration, source: .tmdb, "a \(job.kind) job is not a TMDB job")
        }
    }

    /// The request for `GET /configuration` (image base URL and sizes), made once at start-up.
    ///
    /// - Throws: A ``SourceError`` when no TMDB key is configured.
    public func configurationRequest() throws(SourceError) -> SourceRequest {
        try self.request(path: ["configuration"], query: [])
    }

    /// How the fetch worker signs in an account: by a v3 session, or by a v4 access token and the account object id
    /// it names.
    enum AccountCredential {
        case session(Secret)
        case accessToken(Secret, objectID: String)
    }

    /// The credential the configuration holds for the account `label`.
    ///
    /// - Throws: A ``SourceError`` (``SourceError/Code-swift.struct/invalidConfiguration``) when it holds none.
    func credential(of label: String) throws(SourceError) -> AccountCredential {
        if let session = self.configuration.tmdbSessions[label] { return .session(session) }
        if let token = self.configuration.tmdbAccessTokens[label],
            let objectID = TMDBAccessToken.accountObjectID(in: token.revealed)
        {
            return .accessToken(token, objectID: objectID)
        }
        throw SourceError(
            .invalidConfiguration,
            source: .tmdb,
            "no session or access token is configured for the TMDB account '\(label)' (set TMDB_SESSION_ID or TMDB_ACCESS_TOKEN with TMDB_ACCOUNT=\(label), or TMDB_SESSIONS or TMDB_ACCESS_TOKENS)"
        )
    }

    /// A v3 request of a signed-in account's data: the account's session (a secret, redacted in the logged URL)
    /// beside the API key. Never conditional: the redacted URL is the same for every session.
    private func accountRequest(
        session: Secret,
        path: [String],
        query: [QueryItem]
    ) throws(SourceError) -> SourceRequest {
        var request = try self.request(
            path: path,
            query: [QueryItem("session_id", session.revealed, isSecret: true)] + query
        )
        request.isConditionalAllowed = false
        return request
    }

    /// A v4 request of a signed-in account's data: the access token alone signs it (`Authorization: Bearer`,
    /// redacted in logs); v4 takes no API key. Never conditional, like the v3 account requests.
    private func accountRequest(token: Secret, path: [String], query: [QueryItem]) throws(SourceError) -> SourceRequest
    {
        guard let base = self.configuration.tmdbV4URL else {
            throw SourceError(
                .invalidConfiguration,
                source: .tmdb,
                "TMDB_V4_BASE_URL is not set and TMDB_BASE_URL does not end in /3"
            )
        }
        var request = SourceRequest.json(
            .tmdb,
            base: base,
            path: path,
            query: query,
            userAgent: self.configuration.userAgent,
            headers: [(name: "Authorization", value: "Bearer \(token.revealed)")]
        )
        request.isConditionalAllowed = false
        return request
    }

    private func request(path: [String], query: [QueryItem]) throws(SourceError) -> SourceRequest {
        try .json(
            .tmdb,
            key: self.configuration.tmdbAPIKey,
            as: "api_key",
            base: self.configuration.tmdbBaseURL,
            path: path,
            query: query,
            userAgent: self.configuration.userAgent
        )
    }

    /// The records and follow-ups of a TMDB response.
    ///
    /// - Throws: A ``SourceError``: 429 rate limited, 5xx unavailable, 401 or `status_code` 7/10 unauthorized,
    ///   404 or `status_code` 34 not found, other 4xx and `errors` bodies bad request, a success body without the
    ///   expected fields malformed.
    public func parse(
        _ response: SourceResponse,
        for job: FetchJob,
        fetchedAt: Int64
    ) throws(SourceError) -> SourceResult {
        // An account job's credential, read once: it decides whose refusal a 401 is and what the answer holds.
        let credential = try job.tmdbAccountLabel.map { label throws(SourceError) in try self.credential(of: label) }
        let signIn: SignIn? = credential.map { if case .accessToken = $0 { .accessToken } else { .session } }
        let json = try self.checkedDocument(response, fetchedAt: fetchedAt, signIn: signIn)
        var parser = TMDBParser(configuration: self.configuration, fetchedAt: fetchedAt)
        switch job {
        case .tmdbList(_, let page, let language, _, let follow), .tmdbSearch(_, let page, let language, _, let follow):
            guard let results = json["results"]?.arrayValue else {
                throw self.check.malformed(response, "a page of movies")
            }
            parser.movies(results, language: language, follow: follow)
            for next in FanOut.pages(
                page: page,
                follow: follow,
                totalPages: json["total_pages"]?.int,
                maxPage: Self.maxPage
            ) {
                parser.result.add(job.tmdbPage(next))
            }
        case .tmdbMovie(let id, let language, let follow):
            guard json["id"]?.int == id else { throw self.check.malformed(response, "the details of movie \(id)") }
            parser.details(json, language: language, follow: follow)
        case .tmdbReviews(let id, let page, let language, let follow):
            guard let results = json["results"]?.arrayValue else {
                throw self.check.malformed(response, "a page of reviews")
            }
            parser.reviews(results, movieID: id)
            for next in FanOut.pages(
                page: page,
                follow: follow,
                totalPages: json["total_pages"]?.int,
                maxPage: Self.maxPage
            ) {
                parser.result.add(.tmdbReviews(id: id, page: next, language: language, follow: follow))
            }
        case .tmdbGenres(let language):
            guard let genres = json["genres"]?.arrayValue else { throw self.check.malformed(response, "a genre list") }
            parser.genres(genres, language: language)
        case .tmdbChanges(_, _, let page, let languages, let follow):
            guard let results = json["results"]?.arrayValue else {
                throw self.check.malformed(response, "a page of changed movie ids")
            }
            parser.changes(results, languages: languages, follow: follow)
            // The whole feed is read (an incremental sync that skips pages misses changes): page 1 queues every
            // other page TMDB reports, up to the feed's last page.
            for next in FanOut.pages(
                page: page,
                follow: Follow(pages: FetchJob.tmdbChangesMaxPage),
                totalPages: json["total_pages"]?.int,
                maxPage: FetchJob.tmdbChangesMaxPage
            ) {
                parser.result.add(job.tmdbPage(next))
            }
        case .tmdbAccount(let account):
            if case .accessToken(_, let objectID) = credential {
                guard json["results"]?.arrayValue != nil else {
                    throw self.check.malformed(response, "a page of the account's lists")
                }
                parser.account(account: account, objectID: objectID)
            } else {
                guard let accountID = json["id"]?.int, accountID > 0 else {
                    throw self.check.malformed(response, "the details of an account")
                }
                parser.account(json, account: account, accountID: accountID)
            }
        case .tmdbAccountList(let account, let accountID, let list, let page, let asOf):
            guard let results = json["results"]?.arrayValue else {
                throw self.check.malformed(response, "a page of the account's \(list.rawValue) movies")
            }
            parser.accountMovies(results, account: account, accountID: accountID, list: list, asOf: asOf)
            if page == 1, asOf != 0 {
                parser.accountRefresh(account: account, list: list, asOf: asOf, total: json["total_results"]?.int)
            }
            // The whole list is read (a rating left out would be missing from the apps): page 1 queues every other
            // page TMDB reports, up to its last page.
            for next in FanOut.pages(
                page: page,
                follow: Follow(pages: Self.maxPage),
                totalPages: json["total_pages"]?.int,
                maxPage: Self.maxPage
            ) {
                parser.result.add(
                    .tmdbAccountList(account: account, accountID: accountID, list: list, page: next, asOf: asOf)
                )
            }
        default:
            throw SourceError(.invalidConfiguration, source: .tmdb, "a \(job.kind) job is not a TMDB job")
        }
        return parser.result
    }

    /// The body of a success answer as JSON, after classifying error answers and TMDB error bodies.
    func checked(_ response: SourceResponse, fetchedAt: Int64) throws(SourceError) -> JSONValue {
        try self.checked(response, fetchedAt: fetchedAt, signIn: nil, read: self.check.json)
    }

    /// How an account request was signed in, which decides whose refusal a 401 is.
    enum SignIn {
        /// A v3 session beside the API key: TMDB's session codes refuse the session, its key codes the key.
        case session
        /// A v4 access token, the request's only credential: every 401 refuses the token.
        case accessToken
    }

    /// ``checked(_:fetchedAt:)`` as a ``JSONDocument``, which reads the members the parser needs without
    /// building the rest (the same answers accepted and refused, the same errors).
    ///
    /// - Parameter signIn: How the request signed in a user, if it did: a session's refusal (TMDB's `status_code`
    ///   3 and 17, or a 401 without a body) or an access token's (any 401) is the account's, not the key's.
    func checkedDocument(
        _ response: SourceResponse,
        fetchedAt: Int64,
        signIn: SignIn? = nil
    ) throws(SourceError) -> JSONDocument.Value {
        try self.checked(response, fetchedAt: fetchedAt, signIn: signIn, read: { JSONDocument($0.body)?.root })
    }

    private func checked<JSON: LenientJSON>(
        _ response: SourceResponse,
        fetchedAt: Int64,
        signIn: SignIn?,
        read: (SourceResponse) -> JSON?
    ) throws(SourceError) -> JSON {
        try self.check.transient(response, fetchedAt: fetchedAt)
        let json = read(response)
        switch signIn {
        case .session: if let refusal = self.sessionRefusal(in: json, response: response) { throw refusal }
        case .accessToken: if let refusal = self.tokenRefusal(in: json, response: response) { throw refusal }
        case nil: break
        }
        if let json, let error = self.error(in: json, response: response, fetchedAt: fetchedAt) { throw error }
        try self.check.status(response, message: nil)
        guard let json, json.isObject else { throw self.check.malformed(response, "a JSON object") }
        return json
    }

    /// TMDB's session codes: 3 "Authentication failed: You do not have permissions to access the service." and
    /// 17 "Session denied." (both HTTP 401).
    static let sessionRefusedCodes: Set<Int64> = [3, 17]

    /// The refusal of an account request's session: `status_code` 3 or 17, or a 401 whose body names no code (the
    /// key's own codes, 7 and 10, stay the key's: they pause TMDB).
    private func sessionRefusal(in json: (some LenientJSON)?, response: SourceResponse) -> SourceError? {
        let code = json?["status_code"]?.int
        if let code, Self.sessionRefusedCodes.contains(code) {
            let message = self.check.scrubbed(json?["status_message"]?.text ?? "status_code \(code)")
            return SourceError(
                .sessionRefused,
                source: .tmdb,
                "\(message) (status_code \(code))",
                status: response.status
            )
        }
        if code == nil, response.status == 401 {
            return SourceError(.sessionRefused, source: .tmdb, "the session was refused", status: response.status)
        }
        return nil
    }

    /// The refusal of a v4 account request's access token: any 401 (TMDB answers an unknown or logged-out token with
    /// `status_code` 7 "Invalid API key", 3 or 17; the API key is not part of the request).
    private func tokenRefusal(in json: (some LenientJSON)?, response: SourceResponse) -> SourceError? {
        guard response.status == 401 else { return nil }
        let code = json?["status_code"]?.int
        let message = code.map { code in
            " (" + self.check.scrubbed(json?["status_message"]?.text ?? "no message") + ", status_code \(code))"
        }
        return SourceError(
            .sessionRefused,
            source: .tmdb,
            "the access token was refused\(message ?? "")",
            status: response.status
        )
    }

    /// The error a TMDB error body (`status_code`/`status_message`, or `errors`) stands for.
    private func error(in json: some LenientJSON, response: SourceResponse, fetchedAt: Int64) -> SourceError? {
        let status = response.status
        if let code = json["status_code"]?.int, json["success"]?.bool == false || !(200...299).contains(status) {
            let message = self.check.scrubbed(json["status_message"]?.text ?? "status_code \(code)")
            let reason = "\(message) (status_code \(code))"
            switch code {
            case 7, 10: return SourceError(.unauthorized(.tmdb), reason, status: status)
            case 34: return SourceError(.notFound, source: .tmdb, reason, status: status)
            case 25:
                let retryAfter = response.header("retry-after").flatMap { RetryAfter.parse($0, now: fetchedAt) }
                return SourceError(.rateLimited, source: .tmdb, reason, status: status, retryAfter: retryAfter)
            default: break
            }
            if (200...299).contains(status) {
                return SourceError(.badRequest, source: .tmdb, reason, status: status)
            }
            do { try self.check.status(response, message: reason) } catch { return error }
            return nil
        }
        if let errors = json["errors"]?.arrayValue {
            let message = self.check.scrubbed(errors.compactMap(\.text).joined(separator: "; "))
            if [401, 403].contains(status) { return SourceError(.unauthorized(.tmdb), message, status: status) }
            if status == 404 { return SourceError(.notFound, source: .tmdb, message, status: status) }
            return SourceError(
                .badRequest,
                source: .tmdb,
                message.isEmpty ? "request refused" : message,
                status: status
            )
        }
        return nil
    }
}

extension FetchJob {
    /// The account label of a `tmdb.account` or `tmdb.account.list` job; `nil` for the other kinds.
    public var tmdbAccountLabel: String? {
        switch self {
        case .tmdbAccount(let account), .tmdbAccountList(let account, _, _, _, _): account
        default: nil
        }
    }

    /// The same list, search or change-feed job for another page.
    func tmdbPage(_ page: Int64) -> FetchJob {
        switch self {
        case .tmdbList(let list, _, let language, let region, let follow):
            .tmdbList(list: list, page: page, language: language, region: region, follow: follow)
        case .tmdbSearch(let query, _, let language, let year, let follow):
            .tmdbSearch(query: query, page: page, language: language, year: year, follow: follow)
        case .tmdbChanges(let start, let end, _, let languages, let follow):
            .tmdbChanges(startDate: start, endDate: end, page: page, languages: languages, follow: follow)
        default:
            self
        }
    }
}

extension FetchJob.TMDBAccountList {
    /// The list's name in TMDB's v4 paths (`/movie/favorites` where v3 says `favorite`).
    var v4Path: String { self == .favorite ? "favorites" : self.rawValue }
}
