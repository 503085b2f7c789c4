import MarqueeCore
import MarqueeJSON

// MARK: - TMDBParser + Account

extension TMDBParser {
    /// The `tmdb.account` record of `GET /account`, and page 1 of each of the account's movie lists.
    ///
    /// The record names the account by its label (the session stays in the fetch worker); TMDB's numeric id goes
    /// into the list jobs, whose paths need it, and the time of this answer names the refresh they belong to
    /// (`as_of`).
    mutating func account(_ json: some LenientJSON, account: String, accountID: Int64) {
        var data = JSONWriter.object(capacity: 256)
        data.write("account", account)
        data.write("account_id", accountID)
        data.write("include_adult", json["include_adult"]?.bool)
        data.writeTrimmedText("language", json["iso_639_1"])
        data.writeTrimmedText("name", json["name"])
        data.writeTrimmedText("region", json["iso_3166_1"])
        data.writeTrimmedText("username", json["username"])
        self.result.records.append(
            Record(kind: .tmdbAccount, key: "tmdb:account:\(account)", fetchedAt: self.fetchedAt, writtenData: data)
        )
        self.accountLists(account: account, accountID: .number(accountID))
    }

    /// The `tmdb.account` record of an account signed in by a v4 access token, and page 1 of each of its movie
    /// lists: v4 has no account details, so the record names the account's label and object id (the token's
    /// `sub`) alone. The answer it follows (the account's own lists) shows the token was accepted.
    mutating func account(account: String, objectID: String) {
        var data = JSONWriter.object(capacity: 128)
        data.write("account", account)
        data.write("account_object_id", objectID)
        self.result.records.append(
            Record(kind: .tmdbAccount, key: "tmdb:account:\(account)", fetchedAt: self.fetchedAt, writtenData: data)
        )
        self.accountLists(account: account, accountID: .object(objectID))
    }

    /// Page 1 of each of an account's movie lists, as part of the refresh this answer starts (`as_of`).
    private mutating func accountLists(account: String, accountID: FetchJob.TMDBAccountID) {
        for list in FetchJob.TMDBAccountList.allCases {
            self.result.add(
                .tmdbAccountList(account: account, accountID: accountID, list: list, page: 1, asOf: self.fetchedAt)
            )
        }
    }

    /// The `tmdb.account.movie` records of a page of an account's list: the movie as the list shows it and, for
    /// the rated list, the user's rating and when it was given.
    ///
    /// The rating is TMDB's `account_rating.value` (with `account_rating.created_at`, when), or the older `rating`
    /// member without a time; an entry without an id, or a rated entry without a rating, is left out.
    mutating func accountMovies(
        _ results: some Sequence<some LenientJSON>,
        account: String,
        accountID: FetchJob.TMDBAccountID,
        list: FetchJob.TMDBAccountList,
        asOf: Int64
    ) {
        for item in results {
            guard let id = Self.id(item) else { continue }
            let rating = item["account_rating"]?["value"]?.double ?? item["rating"]?.double
            if list == .rated {
                guard let rating, (0...10).contains(rating) else { continue }
            }
            var data = JSONWriter.object(capacity: 256)
            data.write("account", account)
            switch accountID {
            case .number(let number): data.write("account_id", number)
            case .object(let objectID): data.write("account_object_id", objectID)
            }
            data.write("as_of", asOf)
            data.write("list", list.rawValue)
            data.write("movie_id", id)
            data.writeTrimmedText("original_title", item["original_title"])
            if list == .rated {
                data.write("rated_at", item["account_rating"]?["created_at"]?.trimmedText.flatMap(Self.timestamp))
                data.write("rating", rating)
            }
            data.write("release_date", item["release_date"]?.isoDate)
            data.writeTrimmedText("title", item["title"])
            self.result.records.append(
                Record(
                    kind: .tmdbAccountMovie,
                    key: "tmdb:account:\(account):\(list.rawValue):\(id)",
                    fetchedAt: self.fetchedAt,
                    writtenData: data
                )
            )
        }
    }

    /// The `tmdb.account.refresh` record of page 1 of a list read as part of a refresh: how many entries TMDB
    /// says the list holds (`total_results`), so the store can tell when the refresh has every entry (then the
    /// entries only older refreshes listed are gone upstream). Without a total, nothing is recorded.
    mutating func accountRefresh(account: String, list: FetchJob.TMDBAccountList, asOf: Int64, total: Int64?) {
        guard let total, total >= 0 else { return }
        var data = JSONWriter.object(capacity: 128)
        data.write("account", account)
        data.write("as_of", asOf)
        data.write("list", list.rawValue)
        data.write("total", total)
        self.result.records.append(
            Record(
                kind: .tmdbAccountRefresh,
                key: "tmdb:account:\(account):\(list.rawValue):refresh:\(asOf)",
                fetchedAt: self.fetchedAt,
                writtenData: data
            )
        )
    }

    /// An ISO 8601 time as TMDB writes it (`2023-06-14T09:52:40.000Z`), kept as sent when it starts with a real
    /// calendar day and has no control characters; `nil` otherwise.
    static func timestamp(_ text: String) -> String? {
        guard text.utf8.count <= 40, text.utf8.count >= 10, ISODate.normalized(String(text.prefix(10))) != nil,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return text
    }
}
