import Foundation
import MarqueeCore
import MarqueeJSON

/// One row to upsert, with the child rows that replace the row's children when the row wins.
struct RowWrite: Sendable {
    var table: Table
    var values: [String: JSONValue]
    var fetchedAt: Int64
    var children: [ChildRows] = []

    /// The natural key as one string (columns joined by U+001F), as the upsert's `RETURNING` writes it.
    var key: String { Self.key(of: self.values, columns: self.table.key) }

    static func key(of values: [String: JSONValue], columns: [Column]) -> String {
        var key = ""
        for (index, column) in columns.enumerated() {
            if index > 0 { key.append("\u{1F}") }
            switch values[column.name] {
            case .integer(let value): key.append(String(value))
            case .string(let value): key.append(value)
            default: break
            }
        }
        return key
    }
}

struct ChildRows: Sendable {
    var table: Table
    var rows: [[String: JSONValue]]
}

/// Turns records into rows (docs/records.md is the contract), checking every field it reads.
///
/// Unknown fields are ignored (a newer fetch stage may send more); a field of the wrong type, a missing required
/// field or a key that does not match the data make the record invalid. Strings lose any U+0000 (PostgreSQL's
/// text cannot hold it); dates must be real calendar days.
enum RecordRows {
    /// - Parameter refresh: Why the record was fetched (its envelope's ``Envelope/refresh``): a `movie` record
    ///   with a reason also writes the movie's `movie_refreshes` row.
    static func rows(for record: Record, refresh: RefreshReason? = nil) throws(StoreError) -> [RowWrite] {
        let fields = Fields(record: record)
        switch record.kind {
        case .movie: return try self.movie(fields, refresh: refresh)
        case .movieLocalized: return try self.movieLocalized(fields)
        case .genre: return try self.genre(fields)
        case .review: return try self.review(fields)
        case .boxOfficeEntry: return try self.boxOffice(fields)
        case .koficMovie: return try self.koficMovie(fields)
        case .koficCatalogue: return try self.koficCatalogue(fields)
        case .tmdbAccount: return try self.tmdbAccount(fields)
        case .tmdbAccountMovie: return try self.tmdbAccountMovie(fields)
        case .tmdbAccountRefresh: return try self.tmdbAccountRefresh(fields)
        case .book: return try self.book(fields)
        case .image: return try self.image(fields)
        case .jobOutcome: return try self.jobOutcome(fields)
        }
    }

    private static let movieDetailFields = [
        "runtime", "budget", "revenue", "imdb_id", "status", "collection_id", "production_countries",
        "spoken_languages", "origin_country",
    ]

    private static func movie(_ f: Fields, refresh: RefreshReason?) throws(StoreError) -> [RowWrite] {
        let id = try f.requiredInt("movie_id")
        try f.expectKey("tmdb:movie:\(id)")
        let genreIDs = try f.intArray("genre_ids")
        let originalTitle = try f.text("original_title")
        let releaseDate = try f.date("release_date")
        var rows = [
            f.row(
                Tables.movies,
                [
                    "movie_id": .integer(id), "original_title": originalTitle.json,
                    "original_title_norm": TitleMatching.fold(originalTitle).json,
                    "original_language": try f.text("original_language").json,
                    "release_date": releaseDate.json, "release_year": Fields.year(of: releaseDate).json,
                    "adult": try f.bool("adult").json, "video": try f.bool("video").json,
                    "popularity": try f.number("popularity").json, "vote_average": try f.number("vote_average").json,
                    "vote_count": try f.int("vote_count").json, "genre_ids": .array(genreIDs.map { .integer($0) }),
                    "poster_path": try f.text("poster_path").json, "backdrop_path": try f.text("backdrop_path").json,
                ],
                children: [
                    ChildRows(
                        table: Tables.movieGenres,
                        rows: Set(genreIDs).sorted().map { ["movie_id": .integer(id), "genre_id": .integer($0)] }
                    )
                ]
            )
        ]
        if f.hasAny(of: self.movieDetailFields) {
            rows.append(
                f.row(
                    Tables.movieDetails,
                    [
                        "movie_id": .integer(id), "runtime": try f.int("runtime").json,
                        "budget": try f.int("budget").json,
                        "revenue": try f.int("revenue").json, "imdb_id": try f.text("imdb_id").json,
                        "status": try f.text("status").json, "collection_id": try f.int("collection_id").json,
                        "production_countries": try f.array("production_countries"),
                        "spoken_languages": try f.array("spoken_languages"),
                        "origin_country": try f.array("origin_country"),
                    ]
                )
            )
        }
        if let refresh {
            rows.append(f.row(Tables.movieRefreshes, ["movie_id": .integer(id), "reason": .string(refresh.rawValue)]))
        }
        return rows
    }

    private static func movieLocalized(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let id = try f.requiredInt("movie_id")
        let language = try f.requiredText("language")
        try f.expectKey("tmdb:movie:\(id):\(language)")
        let title = try f.text("title")
        var rows = [
            f.row(
                Tables.movieTranslations,
                [
                    "movie_id": .integer(id), "language": .string(language), "title": title.json,
                    "title_norm": TitleMatching.fold(title).json, "overview": try f.text("overview").json,
                ]
            )
        ]
        if f.hasAny(of: ["tagline", "homepage", "poster_path"]) {
            rows.append(
                f.row(
                    Tables.movieTranslationDetails,
                    [
                        "movie_id": .integer(id), "language": .string(language), "tagline": try f.text("tagline").json,
                        "homepage": try f.text("homepage").json, "poster_path": try f.text("poster_path").json,
                    ]
                )
            )
        }
        return rows
    }

    private static func genre(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let id = try f.requiredInt("genre_id")
        let language = try f.requiredText("language")
        try f.expectKey("tmdb:genre:\(id):\(language)")
        return [
            f.row(
                Tables.genres,
                ["genre_id": .integer(id), "language": .string(language), "name": try f.text("name").json]
            )
        ]
    }

    private static func review(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let id = try f.requiredText("review_id")
        try f.expectKey("tmdb:review:\(id)")
        return [
            f.row(
                Tables.reviews,
                [
                    "review_id": .string(id), "movie_id": .integer(try f.requiredInt("movie_id")),
                    "author": try f.text("author").json, "author_name": try f.text("author_name").json,
                    "username": try f.text("username").json, "avatar_url": try f.text("avatar_url").json,
                    "rating": try f.number("rating").json, "content": try f.text("content").json,
                    "url": try f.text("url").json, "created_at": try f.text("created_at").json,
                    "updated_at": try f.text("updated_at").json, "language": try f.text("language").json,
                ]
            )
        ]
    }

    private static let periods: Set<String> = ["daily", "week", "weekend", "weekdays"]

    private static func boxOffice(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let period = try f.requiredText("period")
        guard self.periods.contains(period) else {
            throw f.invalid("period", "'\(period.prefix(40))' is not daily, week, weekend or weekdays")
        }
        let rank = try f.requiredInt("rank")
        // kofic:<period>:<day or yearWeekTime>:<rank>: the middle part tells the day or week apart.
        let parts = f.record.key.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "kofic", parts[1] == period, parts[3] == "\(rank)", !parts[2].isEmpty,
            parts[2].allSatisfy(\.isASCII), parts[2].allSatisfy(\.isNumber)
        else {
            throw f.invalid(nil, "the key does not match kofic:\(period):<date or week>:\(rank)")
        }
        var values: [String: JSONValue] = [
            "period": .string(period), "period_key": .string(String(parts[2])), "rank": .integer(rank),
            "date": try f.date("date").json, "year_week": try f.text("year_week").json,
            "show_range": try f.text("show_range").json, "show_range_start": try f.date("show_range_start").json,
            "show_range_end": try f.date("show_range_end").json, "rank_change": try f.int("rank_change").json,
            "is_new": try f.bool("is_new").json, "movie_cd": try f.text("movie_cd").json,
            "movie_name": try f.text("movie_name").json, "open_date": try f.date("open_date").json,
        ]
        for name in [
            "sales_amount", "sales_change", "sales_accumulated", "audience_count", "audience_change",
            "audience_accumulated", "screen_count", "show_count",
        ] {
            values[name] = try f.int(name).json
        }
        for name in ["sales_share", "sales_change_rate", "audience_change_rate"] {
            values[name] = try f.number(name).json
        }
        return [f.row(Tables.boxOffice, values)]
    }

    private static func koficMovie(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let code = try f.requiredText("movie_cd")
        try f.expectKey("kofic:movie:\(code)")
        let title = try f.text("title")
        let titleEnglish = try f.text("title_en")
        let openDate = try f.date("open_date")
        let productionYear = try f.int("production_year")
        var values: [String: JSONValue] = [
            "movie_cd": .string(code), "title": title.json, "title_norm": TitleMatching.fold(title).json,
            "title_en": titleEnglish.json, "title_en_norm": TitleMatching.fold(titleEnglish).json,
            "title_original": try f.text("title_original").json, "production_year": productionYear.json,
            "open_date": openDate.json, "year": (Fields.year(of: openDate) ?? productionYear).json,
            "runtime": try f.int("runtime").json, "production_status": try f.text("production_status").json,
            "type": try f.text("type").json, "actor_count": try f.int("actor_count").json,
        ]
        for name in ["nations", "genres", "directors", "actors", "show_types", "companies", "audits"] {
            values[name] = try f.array(name)
        }
        return [f.row(Tables.koficMovies, values)]
    }

    private static func koficCatalogue(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let code = try f.requiredText("movie_cd")
        try f.expectKey("kofic:catalogue:\(code)")
        let title = try f.text("title")
        let openDate = try f.date("open_date")
        let productionYear = try f.int("production_year")
        var values: [String: JSONValue] = [
            "movie_cd": .string(code), "title": title.json, "title_norm": TitleMatching.fold(title).json,
            "title_en": try f.text("title_en").json, "production_year": productionYear.json,
            "open_date": openDate.json, "year": (Fields.year(of: openDate) ?? productionYear).json,
            "type": try f.text("type").json, "production_status": try f.text("production_status").json,
            "nation": try f.text("nation").json, "genre": try f.text("genre").json,
        ]
        for name in ["nations", "genres", "directors", "companies"] {
            values[name] = try f.array(name)
        }
        return [f.row(Tables.koficCatalogue, values)]
    }

    private static func tmdbAccount(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let account = try f.requiredText("account")
        guard FetchJob.isTMDBAccountLabel(account) else { throw f.invalid("account", "not an account label") }
        try f.expectKey("tmdb:account:\(account)")
        var values: [String: JSONValue] = [
            "account": .string(account), "username": try f.text("username").json, "name": try f.text("name").json,
            "language": try f.text("language").json, "region": try f.text("region").json,
            "include_adult": try f.bool("include_adult").json,
        ]
        try Self.accountIDs(f, into: &values)
        return [f.row(Tables.tmdbAccounts, values)]
    }

    /// A rated movie goes to `account_ratings` (its rating required, 0…10), a favourite or watchlist entry to
    /// `account_lists`.
    private static func tmdbAccountMovie(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let (account, list) = try Self.accountList(f)
        let movieID = try f.requiredInt("movie_id")
        try f.expectKey("tmdb:account:\(account):\(list.rawValue):\(movieID)")
        var values: [String: JSONValue] = [
            "account": .string(account), "movie_id": .integer(movieID), "title": try f.text("title").json,
            "original_title": try f.text("original_title").json, "release_date": try f.date("release_date").json,
            "as_of": .integer(try Self.asOf(f)),
        ]
        try Self.accountIDs(f, into: &values)
        guard list == .rated else {
            values["list"] = .string(list.rawValue)
            return [f.row(Tables.accountLists, values)]
        }
        guard let rating = try f.number("rating"), (0...10).contains(rating) else {
            throw f.invalid("rating", "a rated movie needs a rating from 0 to 10")
        }
        values["rating"] = .number(rating)
        values["rated_at"] = try f.text("rated_at").json
        return [f.row(Tables.accountRatings, values)]
    }

    /// How the record names the account upstream: `account_id` (v3, a positive number) or `account_object_id`
    /// (v4, the access token's account), exactly one; the other column is written `NULL`, so an account signed in
    /// anew the other way keeps no stale id.
    private static func accountIDs(_ f: Fields, into values: inout [String: JSONValue]) throws(StoreError) {
        let number = try f.int("account_id")
        let objectID = try f.text("account_object_id")
        switch (number, objectID) {
        case (let number?, nil):
            guard number > 0 else { throw f.invalid("account_id", "must be positive") }
        case (nil, let objectID?):
            guard TMDBAccessToken.isAccountObjectID(objectID) else {
                throw f.invalid("account_object_id", "expected 1 to 64 letters and digits")
            }
        case (nil, nil):
            throw f.invalid("account_id", "the record names the account by neither account_id nor account_object_id")
        case (_?, _?):
            throw f.invalid(
                "account_object_id",
                "the record names the account by both account_id and account_object_id"
            )
        }
        values["account_id"] = number.map(JSONValue.integer) ?? .null
        values["account_object_id"] = objectID.map(JSONValue.string) ?? .null
    }

    /// The `account` (a label) and `list` (rated, favorite or watchlist) of an account list's record.
    private static func accountList(_ f: Fields) throws(StoreError) -> (String, FetchJob.TMDBAccountList) {
        let account = try f.requiredText("account")
        guard FetchJob.isTMDBAccountLabel(account) else { throw f.invalid("account", "not an account label") }
        let listName = try f.requiredText("list")
        guard let list = FetchJob.TMDBAccountList(rawValue: listName) else {
            throw f.invalid("list", "expected one of rated, favorite, watchlist")
        }
        return (account, list)
    }

    /// How many entries a list held at one refresh.
    private static func tmdbAccountRefresh(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let (account, list) = try Self.accountList(f)
        let asOf = try Self.asOf(f)
        guard asOf > 0 else { throw f.invalid("as_of", "a refresh needs its time") }
        try f.expectKey("tmdb:account:\(account):\(list.rawValue):refresh:\(asOf)")
        let total = try f.requiredInt("total")
        guard total >= 0 else { throw f.invalid("total", "must not be negative") }
        return [
            f.row(
                Tables.accountListRefreshes,
                [
                    "account": .string(account), "list": .string(list.rawValue), "as_of": .integer(asOf),
                    "total": .integer(total),
                ]
            )
        ]
    }

    /// `as_of`: the refresh of an account entry (epoch ms); 0 when the record names none.
    private static func asOf(_ f: Fields) throws(StoreError) -> Int64 {
        let asOf = try f.int("as_of") ?? 0
        guard asOf >= 0 else { throw f.invalid("as_of", "must not be negative") }
        return asOf
    }

    private static func book(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let key = f.record.key
        let workID = try f.text("work_id")
        let editionID = try f.text("edition_id")
        if let workID {
            try f.expectKey("openlibrary:work:\(workID)")
        } else if let editionID {
            try f.expectKey("openlibrary:edition:\(editionID)")
        } else {
            throw f.invalid("work_id", "a book needs a work_id or an edition_id")
        }
        let title = try f.text("title")
        var rows = [
            f.row(
                Tables.books,
                [
                    "book_key": .string(key), "work_id": workID.json, "edition_id": editionID.json, "title": title.json,
                    "title_norm": TitleMatching.fold(title).json, "cover_id": try f.int("cover_id").json,
                    "subjects": try f.array("subjects"),
                ]
            )
        ]
        if f.hasAny(of: ["authors", "isbn", "first_publish_year", "edition_count", "languages"]) {
            var authors: [[String: JSONValue]] = []
            for (position, author) in try f.objectArray("authors").enumerated() {
                let name = try f.text(author["name"], field: "authors[\(position)].name")
                let authorKey = try f.text(author["key"], field: "authors[\(position)].key")
                authors.append([
                    "book_key": .string(key), "position": .integer(Int64(position)), "author_key": authorKey.json,
                    "name": name.json, "name_norm": TitleMatching.fold(name).json,
                ])
                if let authorKey {
                    rows.append(
                        f.row(
                            Tables.authors,
                            [
                                "author_key": .string(authorKey), "name": name.json,
                                "name_norm": TitleMatching.fold(name).json,
                            ]
                        )
                    )
                }
            }
            rows.append(
                f.row(
                    Tables.bookSearchFacts,
                    [
                        "book_key": .string(key), "first_publish_year": try f.int("first_publish_year").json,
                        "isbn": try f.array("isbn"), "languages": try f.array("languages"),
                        "edition_count": try f.int("edition_count").json,
                    ],
                    children: [ChildRows(table: Tables.bookAuthors, rows: authors)]
                )
            )
        }
        if f.hasAny(of: ["description", "author_keys", "first_publish_date", "covers"]) {
            rows.append(
                f.row(
                    Tables.bookWorkFacts,
                    [
                        "book_key": .string(key), "description": try f.text("description").json,
                        "first_publish_date": try f.text("first_publish_date").json,
                        "author_keys": try f.array("author_keys"), "covers": try f.array("covers"),
                    ]
                )
            )
        }
        return rows
    }

    private static let roles: Set<String> = ["poster", "backdrop", "cover"]

    private static func image(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let owner = try f.requiredText("owner")
        let role = try f.requiredText("role")
        guard self.roles.contains(role) else {
            throw f.invalid("role", "'\(role.prefix(40))' is not poster, backdrop or cover")
        }
        try f.expectKey("\(owner):\(role)")
        let sha256 = try f.requiredText("sha256")
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            throw f.invalid("sha256", "not 64 lowercase hex digits")
        }
        guard case .object(let original)? = f.record.data["original"] else {
            throw f.invalid("original", "expected an object")
        }
        var variants: [[String: JSONValue]] = []
        for (index, variant) in try f.objectArray("variants").enumerated() {
            let field = "variants[\(index)]"
            variants.append([
                "sha256": .string(sha256),
                "width": .integer(try f.requiredInt(variant["width"], field: "\(field).width")),
                "format": .string(try f.requiredText(variant["format"], field: "\(field).format")),
                "height": .integer(try f.requiredInt(variant["height"], field: "\(field).height")),
                "bytes": .integer(try f.requiredInt(variant["bytes"], field: "\(field).bytes")),
                "store_key": .string(try f.requiredText(variant["key"], field: "\(field).key")),
                "url": try f.text(variant["url"], field: "\(field).url").json,
            ])
        }
        return [
            f.row(
                Tables.images,
                [
                    "sha256": .string(sha256),
                    "format": .string(try f.requiredText(original["format"], field: "original.format")),
                    "width": .integer(try f.requiredInt(original["width"], field: "original.width")),
                    "height": .integer(try f.requiredInt(original["height"], field: "original.height")),
                    "bytes": .integer(try f.requiredInt(original["bytes"], field: "original.bytes")),
                    "dominant_color": try f.text("dominant_color").json, "blurhash": try f.text("blurhash").json,
                ],
                children: [ChildRows(table: Tables.imageVariants, rows: variants)]
            ),
            f.row(
                Tables.entityImages,
                [
                    "owner": .string(owner), "role": .string(role), "sha256": .string(sha256),
                    "source_url": .string(try f.requiredText("source_url")),
                    "downloaded_url": try f.text("downloaded_url").json, "rendition": try f.text("rendition").json,
                ]
            ),
        ]
    }

    private static func jobOutcome(_ f: Fields) throws(StoreError) -> [RowWrite] {
        let outcome: JobOutcome
        do {
            outcome = try JobOutcome.decode(f.record)
        } catch {
            throw f.invalid(error.field, error.description)
        }
        let result = outcome.outcome
        var values: [String: JSONValue] = [:]
        values["job_id"] = .string(outcome.jobID.description)
        values["root_id"] = .string(outcome.rootID.description)
        values["parent_id"] = (outcome.parentID?.description).json
        values["stage"] = .string(outcome.stage)
        values["kind"] = .string(outcome.kind)
        values["attempt"] = .integer(Int64(outcome.attempt))
        values["outcome"] = .string(result.name)
        values["tier"] = result.tier.map { Int64($0) }.json
        values["error_kind"] = (result.errorKind?.rawValue).json
        values["error"] = result.error.map { Fields.sanitized($0) }.json
        values["outputs"] = .object(JSONObject(outcome.outputs.mapValues { .integer(Int64($0)) }))
        values["spawned"] = .array(outcome.spawned.map { .string($0.description) })
        values["source"] = .string(outcome.source)
        return [f.row(Tables.jobOutcomes, values)]
    }
}

/// Reads a record's `data`, checking types, and builds rows.
struct Fields {
    let record: Record

    func row(_ table: Table, _ values: [String: JSONValue], children: [ChildRows] = []) -> RowWrite {
        var values = values
        values["fetched_at"] = .integer(self.record.fetchedAt)
        return RowWrite(table: table, values: values, fetchedAt: self.record.fetchedAt, children: children)
    }

    func invalid(_ field: String?, _ reason: String) -> StoreError {
        StoreError.invalidRecord(kind: self.record.kind.rawValue, key: self.record.key, field: field, reason)
    }

    func expectKey(_ expected: String) throws(StoreError) {
        guard self.record.key == expected else {
            throw self.invalid(nil, "the key does not match its data (expected '\(expected.prefix(200))')")
        }
    }

    func hasAny(of names: [String]) -> Bool { names.contains { self.record.data[$0] != nil } }

    func int(_ name: String) throws(StoreError) -> Int64? { try self.int(self.record.data[name], field: name) }

    func int(_ value: JSONValue?, field: String) throws(StoreError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .integer(let value)?: return value
        case .number(let value)? where value.rounded() == value && abs(value) < 9.0e15: return Int64(value)
        case let value?: throw self.invalid(field, "expected an integer, got \(value.typeName)")
        }
    }

    func requiredInt(_ name: String) throws(StoreError) -> Int64 {
        try self.requiredInt(self.record.data[name], field: name)
    }

    func requiredInt(_ value: JSONValue?, field: String) throws(StoreError) -> Int64 {
        guard let value = try self.int(value, field: field) else {
            throw self.invalid(field, "required, missing or null")
        }
        return value
    }

    func number(_ name: String) throws(StoreError) -> Double? {
        switch self.record.data[name] {
        case nil, .null?: return nil
        case .integer(let value)?: return Double(value)
        case .number(let value)?: return value
        case let value?: throw self.invalid(name, "expected a number, got \(value.typeName)")
        }
    }

    func bool(_ name: String) throws(StoreError) -> Bool? {
        switch self.record.data[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let value?: throw self.invalid(name, "expected a boolean, got \(value.typeName)")
        }
    }

    func text(_ name: String) throws(StoreError) -> String? { try self.text(self.record.data[name], field: name) }

    func text(_ value: JSONValue?, field: String) throws(StoreError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let value)?: return Self.sanitized(value)
        case let value?: throw self.invalid(field, "expected a string, got \(value.typeName)")
        }
    }

    func requiredText(_ name: String) throws(StoreError) -> String {
        try self.requiredText(self.record.data[name], field: name)
    }

    func requiredText(_ value: JSONValue?, field: String) throws(StoreError) -> String {
        guard let text = try self.text(value, field: field), !text.isEmpty else {
            throw self.invalid(field, "required, missing or empty")
        }
        return text
    }

    /// A `YYYY-MM-DD` calendar day, or `nil`.
    func date(_ name: String) throws(StoreError) -> String? {
        guard let text = try self.text(name) else { return nil }
        guard Self.isCalendarDay(text) else { throw self.invalid(name, "'\(text.prefix(40))' is not a YYYY-MM-DD day") }
        return text
    }

    static func isCalendarDay(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1,
            (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    static func year(of date: String?) -> Int64? { date.flatMap { Int64($0.prefix(4)) } }

    /// An array field as JSON (absent or null → `[]`).
    func array(_ name: String) throws(StoreError) -> JSONValue {
        switch self.record.data[name] {
        case nil, .null?: return .array([])
        case .array(let values)?: return .array(values.map(Self.sanitized))
        case let value?: throw self.invalid(name, "expected an array, got \(value.typeName)")
        }
    }

    func intArray(_ name: String) throws(StoreError) -> [Int64] {
        guard case .array(let values) = try self.array(name) else { return [] }
        var result: [Int64] = []
        for (index, value) in values.enumerated() {
            result.append(try self.requiredInt(value, field: "\(name)[\(index)]"))
        }
        return result
    }

    func objectArray(_ name: String) throws(StoreError) -> [[String: JSONValue]] {
        guard case .array(let values) = try self.array(name) else { return [] }
        var result: [[String: JSONValue]] = []
        for (index, value) in values.enumerated() {
            guard case .object(let members) = value else {
                throw self.invalid("\(name)[\(index)]", "expected an object, got \(value.typeName)")
            }
            result.append(members.dictionary)
        }
        return result
    }

    static func sanitized(_ text: String) -> String {
        text.utf8.contains(0) ? String(text.unicodeScalars.filter { $0 != "\u{0}" }.map(Character.init)) : text
    }

    static func sanitized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .string(self.sanitized(text))
        case .array(let values): .array(values.map(self.sanitized))
        case .object(let members) where !members.contains(where: { $0.key.utf8.contains(0) }):
            .object(members.mapValues(self.sanitized))
        case .object(let members):
            // Keys that differ only by NULs become one key, with the first one's value.
            .object(
                JSONObject(
                    Dictionary(
                        members.map { (self.sanitized($0.key), self.sanitized($0.value)) },
                        uniquingKeysWith: { first, _ in first }
                    )
                )
            )
        default: value
        }
    }
}

extension Optional where Wrapped == String {
    var json: JSONValue { self.map { .string($0) } ?? .null }
}

extension Optional where Wrapped == Int64 {
    var json: JSONValue { self.map { .integer($0) } ?? .null }
}

extension Optional where Wrapped == Double {
    var json: JSONValue { self.map { .number($0) } ?? .null }
}

extension Optional where Wrapped == Bool {
    var json: JSONValue { self.map { .bool($0) } ?? .null }
}
