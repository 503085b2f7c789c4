public import MarqueeJSON

// MARK: - FetchJob + Encoding

extension FetchJob {
    /// The JSON form.
    public var json: JSONValue {
        var fields: JSONObject = ["v": .integer(Self.version), "kind": .string(self.kind)]
        func follow(_ follow: Follow) { if follow != .none { fields["follow"] = follow.json } }
        switch self {
        case .tmdbList(let list, let page, let language, let region, let f):
            fields["list"] = .string(list.rawValue)
            fields["page"] = .integer(page)
            fields["language"] = .string(language)
            if let region { fields["region"] = .string(region) }
            follow(f)
        case .tmdbSearch(let query, let page, let language, let year, let f):
            fields["query"] = .string(query)
            fields["page"] = .integer(page)
            fields["language"] = .string(language)
            if let year { fields["year"] = .integer(year) }
            follow(f)
        case .tmdbMovie(let id, let language, let f):
            fields["id"] = .integer(id)
            fields["language"] = .string(language)
            follow(f)
        case .tmdbReviews(let id, let page, let language, let f):
            fields["id"] = .integer(id)
            fields["page"] = .integer(page)
            fields["language"] = .string(language)
            follow(f)
        case .tmdbGenres(let language):
            fields["language"] = .string(language)
        case .tmdbChanges(let start, let end, let page, let languages, let f):
            fields["start_date"] = .string(start)
            fields["end_date"] = .string(end)
            fields["page"] = .integer(page)
            fields["languages"] = .array(languages.map { .string($0) })
            follow(f)
        case .tmdbAccount(let account):
            fields["account"] = .string(account)
        case .tmdbAccountList(let account, let accountID, let list, let page, let asOf):
            fields["account"] = .string(account)
            switch accountID {
            case .number(let number): fields["account_id"] = .integer(number)
            case .object(let objectID): fields["account_object_id"] = .string(objectID)
            }
            fields["list"] = .string(list.rawValue)
            fields["page"] = .integer(page)
            if asOf != 0 { fields["as_of"] = .integer(asOf) }
        case .koficDailyBoxOffice(let date, let f):
            fields["date"] = .string(date)
            follow(f)
        case .koficWeeklyBoxOffice(let date, let week, let f):
            fields["date"] = .string(date)
            fields["week"] = .integer(week.rawValue)
            follow(f)
        case .koficMovie(let code, let f):
            fields["movie_cd"] = .string(code)
            follow(f)
        case .koficMovies(let query, let page, let f):
            fields["page"] = .integer(page)
            query.write(into: &fields)
            follow(f)
        case .kakaoPoster(let query, let movieCode):
            fields["query"] = .string(query)
            if let movieCode { fields["movie_cd"] = .string(movieCode) }
        case .openLibrarySearch(let query, let page, let limit, let f):
            fields["q"] = .string(query)
            fields["page"] = .integer(page)
            fields["limit"] = .integer(limit)
            follow(f)
        case .openLibraryWork(let id, let f):
            fields["id"] = .string(id)
            follow(f)
        }
        return .object(fields)
    }

    /// The payload bytes: ``json`` encoded. The TMDB kinds (a list or search page's twenty follow-ups) are written
    /// member by member in sorted key order without building the object, the same bytes (a tenth of a list page's
    /// parse and encode); the others through ``json``.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter.object(capacity: 160)
        switch self {
        case .tmdbList(let list, let page, let language, let region, let follow):
            follow.write(to: &writer)
            writer.write("kind", self.kind)
            writer.write("language", language)
            writer.write("list", list.rawValue)
            writer.write("page", page)
            if let region { writer.write("region", region) }
            writer.write("v", Self.version)
        case .tmdbSearch(let query, let page, let language, let year, let follow):
            follow.write(to: &writer)
            writer.write("kind", self.kind)
            writer.write("language", language)
            writer.write("page", page)
            writer.write("query", query)
            writer.write("v", Self.version)
            if let year { writer.write("year", year) }
        case .tmdbMovie(let id, let language, let follow):
            follow.write(to: &writer)
            writer.write("id", id)
            writer.write("kind", self.kind)
            writer.write("language", language)
            writer.write("v", Self.version)
        case .tmdbReviews(let id, let page, let language, let follow):
            follow.write(to: &writer)
            writer.write("id", id)
            writer.write("kind", self.kind)
            writer.write("language", language)
            writer.write("page", page)
            writer.write("v", Self.version)
        default:
            return self.json.encoded()
        }
        writer.endObject()
        return writer.finish()
    }
}
