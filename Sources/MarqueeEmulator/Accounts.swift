/// Signed-in TMDB users: `/account` and each account's rated movies, favourites and watchlist, for the sessions
/// the settings accept (``EmulatorSettings/tmdbSessions``).
///
/// Each session is one account, made from the seed and the session: its id, username and lists are the same on
/// every run. A session TMDB no longer accepts answers TMDB's 401 bodies: `status_code` 17 "Session denied." for
/// a revoked one (``EmulatorSettings/tmdbRevokedSessions``), `status_code` 3 "Authentication failed: You do not
/// have permissions to access the service." for a missing or unknown one, or for another account's id.
struct Accounts: Sendable {
    let catalogue: Catalogue

    /// One account's movies: a movie index and, for the rated list, the rating and its day.
    struct Entry: Sendable {
        var index: Int
        var rating: Double
        var ratedOn: Day
    }

    /// How many movies each list of an account holds: rated 25…64, favourites 5…24, watchlist 10…49.
    static func sizes(_ random: inout SeededRandom) -> (rated: Int, favorite: Int, watchlist: Int) {
        (random.int(25...64), random.int(5...24), random.int(10...49))
    }

    static let sessionDenied = TMDB.error(401, code: 17, message: "Session denied.")
    static let authenticationFailed = TMDB.error(
        401,
        code: 3,
        message: "Authentication failed: You do not have permissions to access the service."
    )

    /// The account's numeric id: 10,000,000 … 99,999,999, from the seed and the session.
    func accountID(session: String) -> Int {
        10_000_000 + Int(StableHash.combine(self.catalogue.seed, StableHash.bytes(Array(session.utf8))) % 90_000_000)
    }

    /// The movies of one list of `owner`'s account, oldest first (TMDB's `created_at.asc`).
    ///
    /// `owner` is what names the account: a v3 session, or the account object id of a v4 access token
    /// (``V4Accounts``). `list` is `rated`, `favorite` or `watchlist`.
    func entries(owner: String, list: String) -> [Entry] {
        let salt = StableHash.bytes(Array(owner.utf8))
        var random = SeededRandom(self.catalogue.seed, salt, 0xACC0)
        let sizes = Self.sizes(&random)
        let (count, listSalt): (Int, UInt64) =
            switch list {
            case "rated": (sizes.rated, 1)
            case "favorite": (sizes.favorite, 2)
            default: (sizes.watchlist, 3)
            }
        var pick = SeededRandom(self.catalogue.seed, salt, listSalt)
        let movies = self.catalogue.cores.count
        var seen = Set<Int>()
        var entries: [Entry] = []
        let reference = self.catalogue.referenceDay
        while entries.count < min(count, movies) {
            let index = pick.int(0...(movies - 1))
            guard self.catalogue.cores[index].isAdult == false, seen.insert(index).inserted else { continue }
            let rating = Double(pick.int(1...20)) / 2
            entries.append(Entry(index: index, rating: rating, ratedOn: reference.adding(-500 + entries.count * 7)))
        }
        return entries
    }

    /// Whether the settings accept a request's session.
    enum SessionCheck {
        case accepted(String)
        case refused(EmulatorResponse)
    }

    /// The request's `session_id` if the settings accept it; TMDB's refusal otherwise.
    static func check(_ request: EmulatorRequest, settings: EmulatorSettings) -> SessionCheck {
        guard let session = request.query["session_id"], !session.isEmpty else {
            return .refused(Self.authenticationFailed)
        }
        if settings.tmdbRevokedSessions.contains(session) { return .refused(Self.sessionDenied) }
        guard settings.tmdbSessions.contains(session) else { return .refused(Self.authenticationFailed) }
        return .accepted(session)
    }

    /// `GET /account` (and `/account/{account_id}`).
    func details(session: String, accountID: Int?) -> EmulatorResponse {
        let id = self.accountID(session: session)
        if let accountID, accountID != id { return Self.authenticationFailed }
        let hash = StableHash.hex(UInt64(id), width: 32)
        return .json(
            .object([
                (
                    "avatar",
                    .object([
                        ("gravatar", .object([("hash", .string(hash))])),
                        ("tmdb", .object([("avatar_path", .null)])),
                    ])
                ),
                ("id", .int(id)),
                ("include_adult", .bool(false)),
                ("iso_3166_1", .string("KR")),
                ("iso_639_1", .string("ko")),
                ("name", .string("Marquee User \(id % 1000)")),
                ("username", .string("marquee-\(id)")),
            ])
        )
    }

    /// `GET /account/{account_id}/{rated|favorite|watchlist}/movies`: 20 a page, oldest first, the rated list
    /// with TMDB's `account_rating` (`value`, `created_at`).
    func list(session: String, accountID: Int, list: String, _ request: EmulatorRequest) -> EmulatorResponse {
        guard accountID == self.accountID(session: session) else { return Self.authenticationFailed }
        return self.page(self.entries(owner: session, list: list), rated: list == "rated", request)
    }

    /// The `page` query parameter: 1 when absent, `nil` unless it is an integer in 1…500.
    static func page(_ request: EmulatorRequest) -> Int? {
        guard let text = request.query["page"] else { return 1 }
        guard let value = Int(text), (1...500).contains(value) else { return nil }
        return value
    }

    /// TMDB's 400 for a `page` out of 1…500.
    static let invalidPage = TMDB.error(
        400,
        code: 22,
        message: "Invalid page: Pages start at 1 and max at 500. They are expected to be an integer."
    )

    /// One page of a list's `entries` as TMDB answers it (v3 and v4 alike): 20 a page, oldest first unless
    /// `sort_by=created_at.desc`, each entry with TMDB's `account_rating` when the list is `rated`.
    func page(_ entries: [Entry], rated: Bool, _ request: EmulatorRequest) -> EmulatorResponse {
        guard let page = Self.page(request) else { return Self.invalidPage }
        let ordered = request.query["sort_by"] == "created_at.desc" ? Array(entries.reversed()) : entries
        let size = TMDB.pageSize
        let start = (page - 1) * size
        let slice = start < ordered.count ? ordered[start..<min(start + size, ordered.count)] : []
        let language = Language(parameter: request.query["language"])
        let results: [JSON] = slice.map { entry in
            var item = self.catalogue.movie(at: entry.index).listEntry(language)
            if rated, case .object(var members) = item {
                members.append(
                    (
                        "account_rating",
                        .object([
                            ("created_at", .string("\(entry.ratedOn.iso)T09:30:00.000Z")),
                            ("value", .double(entry.rating)),
                        ])
                    )
                )
                item = .object(members)
            }
            return item
        }
        return .json(
            .object([
                ("page", .int(page)),
                ("results", .array(results)),
                ("total_pages", .int((ordered.count + size - 1) / size)),
                ("total_results", .int(ordered.count)),
            ])
        )
    }
}
