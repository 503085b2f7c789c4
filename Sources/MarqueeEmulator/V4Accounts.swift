import MarqueeCore

/// TMDB's v4 account API: an account's own lists and its rated movies, favourites and watchlist, for the user
/// access tokens the settings accept (``EmulatorSettings/tmdbAccessTokens``).
///
/// A v4 request names its account twice: the token's subject (its account object id, ``TMDBAccessToken``) and the
/// `{account_object_id}` of the path; the two must agree. The account's movies come from
/// ``Accounts/entries(owner:list:)`` with the subject as the owner, so the same subject has the same movies on every
/// emulator with the same seed.
/// A v4 request carries no `api_key`: the bearer token is both the key and the session. A token TMDB no longer
/// accepts answers TMDB's 401 `status_code` 3 "Authentication failed: You do not have permissions to access the
/// service." when revoked (``EmulatorSettings/tmdbRevokedAccessTokens``) or when its subject is another account.
struct V4Accounts: Sendable {
    let accounts: Accounts

    /// The account lists of the v4 paths and the ``Accounts`` list each one is: v4 says `favorites` where v3 says
    /// `favorite`.
    static let movieLists: [String: String] = ["rated": "rated", "favorites": "favorite", "watchlist": "watchlist"]

    /// The bearer token of `request` (`Authorization: Bearer <token>`), or `nil` without one.
    static func token(_ request: EmulatorRequest) -> String? {
        guard let authorization = request.header("authorization"), authorization.hasPrefix("Bearer ") else {
            return nil
        }
        let token = String(authorization.dropFirst(7))
        return token.isEmpty ? nil : token
    }

    /// The tokens that get past the key check: accepted ones and revoked ones, which are refused later with
    /// `status_code` 3 rather than as an unknown key.
    static func known(_ settings: EmulatorSettings) -> [String] {
        settings.tmdbAccessTokens + settings.tmdbRevokedAccessTokens
    }

    /// The subject of an accepted `token` when it names `accountObjectID`; TMDB's refusal otherwise.
    ///
    /// `token` is one ``known(_:)`` accepts; revoked tokens and tokens of another account are refused with
    /// `status_code` 3.
    static func check(_ token: String, accountObjectID: String, settings: EmulatorSettings) -> Accounts.SessionCheck {
        if settings.tmdbRevokedAccessTokens.contains(token) { return .refused(Accounts.authenticationFailed) }
        guard let subject = TMDBAccessToken.accountObjectID(in: token), subject == accountObjectID else {
            return .refused(Accounts.authenticationFailed)
        }
        return .accepted(subject)
    }

    /// `GET /4/account/{account_object_id}/lists`: the account's own 0…3 lists, all on page 1.
    func lists(subject: String, _ request: EmulatorRequest) -> EmulatorResponse {
        guard let page = Accounts.page(request) else { return Accounts.invalidPage }
        let seed = self.accounts.catalogue.seed
        let salt = StableHash.bytes(Array(subject.utf8))
        var random = SeededRandom(seed, salt, 0x4115)
        let count = random.int(0...3)
        let reference = self.accounts.catalogue.referenceDay
        var lists: [JSON] = []
        for index in 0..<count {
            var list = SeededRandom(seed, salt, 0x4116, UInt64(index))
            let id = 1_000_000 + Int(StableHash.combine(seed, salt, 0x4117, UInt64(index)) % 8_000_000)
            let name = TextGenerator.englishTitle(&list)
            let description = list.chance(0.3) ? "" : TextGenerator.englishOverview(&list)
            let items = list.int(0...60)
            let created = reference.adding(-900 + index * 120 + list.int(0...90))
            let updated = created.adding(list.int(0...200))
            let rating = items == 0 ? 0 : Double(list.int(40...90)) / 10
            lists.append(
                .object([
                    ("account_object_id", .string(subject)),
                    ("average_rating", .double(rating)),
                    ("backdrop_path", .null),
                    ("created_at", .string(Self.timestamp(created, seconds: list.int(0...86399)))),
                    ("description", .string(description)),
                    ("featured", .int(0)),
                    ("id", .int(id)),
                    ("iso_3166_1", .string("US")),
                    ("iso_639_1", .string("en")),
                    ("name", .string(name)),
                    ("number_of_items", .int(items)),
                    ("poster_path", .null),
                    ("public", .int(1)),
                    ("revenue", .int(0)),
                    ("runtime", .int(0)),
                    ("sort_by", .int(1)),
                    ("updated_at", .string(Self.timestamp(updated, seconds: list.int(0...86399)))),
                ])
            )
        }
        let size = TMDB.pageSize
        return .json(
            .object([
                ("page", .int(page)),
                ("results", .array(page == 1 ? lists : [])),
                ("total_pages", .int((lists.count + size - 1) / size)),
                ("total_results", .int(lists.count)),
            ])
        )
    }

    /// `GET /4/account/{account_object_id}/movie/{rated,favorites,watchlist}`: the v3 list's answer for the subject's
    /// account (``Accounts/page(_:rated:_:)``). `list` is a key of ``movieLists``.
    func movies(subject: String, list: String, _ request: EmulatorRequest) -> EmulatorResponse {
        let name = Self.movieLists[list] ?? list
        return self.accounts.page(self.accounts.entries(owner: subject, list: name), rated: name == "rated", request)
    }

    /// TMDB v4's time format: `2024-01-02 10:00:00 UTC`.
    static func timestamp(_ day: Day, seconds: Int) -> String {
        "\(day.iso) \(Day.pad(seconds / 3600, 2)):\(Day.pad(seconds / 60 % 60, 2)):\(Day.pad(seconds % 60, 2)) UTC"
    }
}
