public import MarqueeJSON

/// How far a fetch job follows what it finds.
public struct Follow: Hashable, Sendable {
    /// For paged endpoints: the last page to fetch (this job's page included). 1 means only this page.
    public var pages: Int64 = 1
    /// Fetch the details of each listed item (TMDB movie details, KOFIC movie info, Open Library work).
    public var details: Bool = false
    /// Fetch reviews of each movie.
    public var reviews: Bool = false
    /// Emit image jobs for posters and covers.
    public var images: Bool = false
    /// Also emit image jobs for TMDB backdrops (wide stills, about as many again as posters).
    public var backdrops: Bool = false

    public init(
        pages: Int64 = 1,
        details: Bool = false,
        reviews: Bool = false,
        images: Bool = false,
        backdrops: Bool = false
    ) {
        self.pages = pages
        self.details = details
        self.reviews = reviews
        self.images = images
        self.backdrops = backdrops
    }

    public static let none = Follow()

    init(reading reader: PayloadReader?) throws(PayloadError) {
        guard var reader else {
            self = .none
            return
        }
        self.pages = try reader.optionalInt("pages", in: FieldRules.pages) ?? 1
        self.details = try reader.optionalBool("details") ?? false
        self.reviews = try reader.optionalBool("reviews") ?? false
        self.images = try reader.optionalBool("images") ?? false
        self.backdrops = try reader.optionalBool("backdrops") ?? false
        try reader.finish()
    }

    var json: JSONValue {
        var fields: JSONObject = [
            "pages": .integer(self.pages), "details": .bool(self.details), "reviews": .bool(self.reviews),
            "images": .bool(self.images),
        ]
        // Written only when asked for, so workers that predate the flag still read every other job.
        if self.backdrops { fields["backdrops"] = .bool(true) }
        return .object(fields)
    }

    /// Writes the member `follow` as ``json`` would be written, unless this is ``none`` (then left out, as
    /// ``FetchJob/json`` leaves it out).
    func write(to writer: inout JSONWriter) {
        guard self != .none else { return }
        writer.key("follow")
        writer.beginObject()
        if self.backdrops { writer.write("backdrops", true) }
        writer.write("details", self.details)
        writer.write("images", self.images)
        writer.write("pages", self.pages)
        writer.write("reviews", self.reviews)
        writer.endObject()
    }
}

/// A job for the fetch stage: one call to one upstream API (docs/design.md, "Payloads").
///
/// The JSON form is `{"v": 1, "kind": "tmdb.list", …fields}`; ``decode(_:)`` is strict (unknown fields, wrong
/// types and out-of-range values are refused with the field's name) and ``dedupeKey`` names the entity, so one
/// entity's jobs land on one partition.
public enum FetchJob: Hashable, Sendable {
    /// The TMDB movie lists.
    public enum TMDBList: String, Hashable, Sendable, CaseIterable {
        case nowPlaying = "now_playing"
        case popular
        case topRated = "top_rated"
        case upcoming
    }

    /// KOFIC's weekly box-office periods (`weekGb`).
    public enum KOFICWeek: Int64, Hashable, Sendable, CaseIterable {
        case week = 0
        case weekend = 1
        case weekdays = 2
    }

    case tmdbList(list: TMDBList, page: Int64, language: String, region: String?, follow: Follow)
    case tmdbSearch(query: String, page: Int64, language: String, year: Int64?, follow: Follow)
    case tmdbMovie(id: Int64, language: String, follow: Follow)
    case tmdbReviews(id: Int64, page: Int64, language: String, follow: Follow)
    case tmdbGenres(language: String)
    /// `date` is `yyyyMMdd`.
    case koficDailyBoxOffice(date: String, follow: Follow)
    /// `date` is any day of the week, `yyyyMMdd`.
    case koficWeeklyBoxOffice(date: String, week: KOFICWeek, follow: Follow)
    case koficMovie(code: String, follow: Follow)
    /// Find a poster for a KOFIC movie by title (and year).
    case kakaoPoster(query: String, movieCode: String?)
    case openLibrarySearch(query: String, page: Int64, limit: Int64, follow: Follow)
    /// `id` is a work id such as `OL45804W`.
    case openLibraryWork(id: String, follow: Follow)

    /// The current payload version.
    public static let version: Int64 = 1

    /// Every `kind` string, in the order docs/design.md, "Payloads" lists them.
    public static let kinds = [
        "tmdb.list", "tmdb.search", "tmdb.movie", "tmdb.reviews", "tmdb.genres", "kofic.boxoffice.daily",
        "kofic.boxoffice.weekly", "kofic.movie", "kakao.poster", "openlibrary.search", "openlibrary.work",
    ]

    /// The payload's `kind`.
    public var kind: String {
        switch self {
        case .tmdbList: "tmdb.list"
        case .tmdbSearch: "tmdb.search"
        case .tmdbMovie: "tmdb.movie"
        case .tmdbReviews: "tmdb.reviews"
        case .tmdbGenres: "tmdb.genres"
        case .koficDailyBoxOffice: "kofic.boxoffice.daily"
        case .koficWeeklyBoxOffice: "kofic.boxoffice.weekly"
        case .koficMovie: "kofic.movie"
        case .kakaoPoster: "kakao.poster"
        case .openLibrarySearch: "openlibrary.search"
        case .openLibraryWork: "openlibrary.work"
        }
    }

    /// The entity this job fetches: the message key, and the key a store dedupes on.
    public var dedupeKey: String {
        switch self {
        case .tmdbList(let list, let page, let language, let region, _):
            "tmdb:list:\(list.rawValue):\(language):\(region ?? "-"):\(page)"
        case .tmdbSearch(let query, let page, let language, let year, _):
            "tmdb:search:\(language):\(year.map(String.init) ?? "-"):\(page):\(query)"
        case .tmdbMovie(let id, let language, _): "tmdb:movie:\(id):\(language)"
        case .tmdbReviews(let id, let page, let language, _): "tmdb:reviews:\(id):\(language):\(page)"
        case .tmdbGenres(let language): "tmdb:genres:\(language)"
        case .koficDailyBoxOffice(let date, _): "kofic:daily:\(date)"
        case .koficWeeklyBoxOffice(let date, let week, _): "kofic:weekly:\(week.rawValue):\(date)"
        case .koficMovie(let code, _): "kofic:movie:\(code)"
        case .kakaoPoster(let query, let movieCode): "kakao:poster:\(movieCode ?? query)"
        case .openLibrarySearch(let query, let page, let limit, _): "openlibrary:search:\(limit):\(page):\(query)"
        case .openLibraryWork(let id, _): "openlibrary:work:\(id)"
        }
    }

    /// Decodes and validates a payload.
    ///
    /// - Throws: A ``PayloadError`` naming the wrong field.
    public static func decode(_ bytes: some Collection<UInt8>) throws(PayloadError) -> FetchJob {
        try self.decode(json: try JSONValue.parse(bytes))
    }

    /// Validates a parsed payload.
    public static func decode(json: JSONValue) throws(PayloadError) -> FetchJob {
        var reader = try PayloadReader(json)
        let version = try reader.int("v", in: 0...Int64.max)
        guard version == Self.version else {
            throw PayloadError(.unsupportedVersion, field: "v", "version \(version) is not supported (this build reads \(Self.version))")
        }
        let kind = try reader.string("kind", maxLength: 64)
        let job: FetchJob
        switch kind {
        case "tmdb.list":
            let name = try reader.string("list", check: { TMDBList(rawValue: $0) != nil }, expected: "one of now_playing, popular, top_rated, upcoming")
            job = .tmdbList(
                list: TMDBList(rawValue: name)!,
                page: try reader.optionalInt("page", in: FieldRules.pages) ?? 1,
                language: try reader.language(),
                region: try reader.optionalString(
                    "region", maxLength: FieldRules.regionLength, check: Validate.region, expected: FieldRules.regionExpected),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "tmdb.search":
            job = .tmdbSearch(
                query: try reader.string("query", maxLength: FieldRules.queryLength),
                page: try reader.optionalInt("page", in: FieldRules.pages) ?? 1,
                language: try reader.language(),
                year: try reader.optionalInt("year", in: FieldRules.years),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "tmdb.movie":
            job = .tmdbMovie(
                id: try reader.int("id", in: FieldRules.tmdbIDs),
                language: try reader.language(),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "tmdb.reviews":
            job = .tmdbReviews(
                id: try reader.int("id", in: FieldRules.tmdbIDs),
                page: try reader.optionalInt("page", in: FieldRules.pages) ?? 1,
                language: try reader.language(),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "tmdb.genres":
            job = .tmdbGenres(language: try reader.language())
        case "kofic.boxoffice.daily":
            job = .koficDailyBoxOffice(
                date: try reader.string("date", maxLength: 8, check: Validate.date, expected: "a date as yyyyMMdd"),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "kofic.boxoffice.weekly":
            let date = try reader.string("date", maxLength: 8, check: Validate.date, expected: "a date as yyyyMMdd")
            job = .koficWeeklyBoxOffice(
                date: date,
                week: KOFICWeek(rawValue: try reader.optionalInt("week", in: 0...2) ?? 0)!,
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "kofic.movie":
            job = .koficMovie(
                code: try reader.string("movie_cd", maxLength: 8, check: Validate.koficCode, expected: "an 8-digit KOFIC movie code"),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "kakao.poster":
            job = .kakaoPoster(
                query: try reader.string("query", maxLength: 500),
                movieCode: try reader.optionalString("movie_cd", maxLength: 8, check: Validate.koficCode, expected: "an 8-digit KOFIC movie code")
            )
        case "openlibrary.search":
            job = .openLibrarySearch(
                query: try reader.string("q", maxLength: 500),
                page: try reader.optionalInt("page", in: 1...1000) ?? 1,
                limit: try reader.optionalInt("limit", in: 1...1000) ?? 100,
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "openlibrary.work":
            job = .openLibraryWork(
                id: try reader.string("id", maxLength: 20, check: Validate.openLibraryWork, expected: "a work id such as OL45804W"),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        default:
            throw PayloadError(.unknownKind, field: "kind", "unknown kind '\(kind.prefix(64))'; expected one of \(Self.kinds.joined(separator: ", "))")
        }
        try reader.finish()
        return job
    }

    /// The job if it passes ``decode(json:)`` of its ``json`` (what the fetch stage will check), with the same
    /// error otherwise. The TMDB kinds (a list or search page's twenty follow-ups) are checked field by field in
    /// the reader's order without building and reading the object (make bench-fetch): their version, kind, list
    /// and follow flags always pass, so only the values that can fail are checked. The others go through
    /// ``decode(json:)``.
    ///
    /// - Throws: The ``PayloadError`` ``decode(json:)`` would throw.
    public func checked() throws(PayloadError) -> FetchJob {
        func page(_ page: Int64) throws(PayloadError) { try PayloadReader.check(page, field: "page", in: FieldRules.pages) }
        func id(_ id: Int64) throws(PayloadError) { try PayloadReader.check(id, field: "id", in: FieldRules.tmdbIDs) }
        func language(_ language: String) throws(PayloadError) {
            try PayloadReader.check(
                language,
                field: "language",
                maxLength: FieldRules.languageLength,
                check: Validate.language,
                expected: FieldRules.languageExpected
            )
        }
        func follow(_ follow: Follow) throws(PayloadError) {
            // Left out of the payload when it is `.none`; of its fields only the page count can be refused.
            guard follow != .none else { return }
            try PayloadReader.check(follow.pages, field: "follow.pages", in: FieldRules.pages)
        }
        switch self {
        case .tmdbList(_, let number, let code, let region, let settings):
            try page(number)
            try language(code)
            if let region {
                try PayloadReader.check(
                    region,
                    field: "region",
                    maxLength: FieldRules.regionLength,
                    check: Validate.region,
                    expected: FieldRules.regionExpected
                )
            }
            try follow(settings)
        case .tmdbSearch(let query, let number, let code, let year, let settings):
            try PayloadReader.check(query, field: "query", maxLength: FieldRules.queryLength)
            try page(number)
            try language(code)
            if let year { try PayloadReader.check(year, field: "year", in: FieldRules.years) }
            try follow(settings)
        case .tmdbMovie(let movie, let code, let settings):
            try id(movie)
            try language(code)
            try follow(settings)
        case .tmdbReviews(let movie, let number, let code, let settings):
            try id(movie)
            try page(number)
            try language(code)
            try follow(settings)
        default:
            return try Self.decode(json: self.json)
        }
        return self
    }

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

extension PayloadReader {
    /// The `language` field: a language tag such as `ko-KR` (default `en-US`).
    mutating func language() throws(PayloadError) -> String {
        try self.optionalString(
            "language", maxLength: FieldRules.languageLength, check: Validate.language, expected: FieldRules.languageExpected)
            ?? "en-US"
    }
}

/// Bounds that both the payload readers (``FetchJob/decode(json:)``, ``ImageJob/decode(json:)``) and the checks
/// without a payload (``FetchJob/checked()``, ``ImageJob/checked()``) apply: one place, so the two cannot drift.
enum FieldRules {
    static let pages: ClosedRange<Int64> = 1...500
    static let tmdbIDs: ClosedRange<Int64> = 1...Int64(Int32.max)
    static let years: ClosedRange<Int64> = 1870...2200
    static let queryLength = 500
    static let languageLength = 10
    static let languageExpected = "a language such as ko-KR"
    static let regionLength = 2
    static let regionExpected = "a region such as KR"
    static let imageURLLength = 2048
    static let imageURLExpected = "an http or https URL"
    static let imageOwnerLength = 200
}

/// Field checks shared by payload kinds.
enum Validate {
    static func language(_ value: String) -> Bool {
        // What passes is `xx` or `xx-YY` in ASCII letters, one byte a character: checked on the bytes (the same
        // verdicts as the former character-wise check, kept in the tests, without its Unicode property lookups;
        // make bench-fetch).
        var value = value
        return value.withUTF8 { bytes in
            let isLower = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
            let isUpper = { (byte: UInt8) in (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
            switch bytes.count {
            case 2: return isLower(bytes[0]) && isLower(bytes[1])
            case 5:
                return isLower(bytes[0]) && isLower(bytes[1]) && bytes[2] == UInt8(ascii: "-") && isUpper(bytes[3])
                    && isUpper(bytes[4])
            default: return false
            }
        }
    }

    static func region(_ value: String) -> Bool {
        value.count == 2 && value.allSatisfy { $0.isASCII && $0.isUppercase }
    }

    /// `yyyyMMdd`, a real calendar day from 1900 on.
    static func date(_ value: String) -> Bool {
        guard value.count == 8, value.allSatisfy({ $0.isASCII && $0.isNumber }),
            let year = Int(value.prefix(4)), let month = Int(value.dropFirst(4).prefix(2)), let day = Int(value.suffix(2)),
            year >= 1900, (1...12).contains(month)
        else { return false }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    static func koficCode(_ value: String) -> Bool {
        value.count == 8 && value.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func openLibraryWork(_ value: String) -> Bool {
        value.hasPrefix("OL") && value.hasSuffix("W") && value.count > 3
            && value.dropFirst(2).dropLast().allSatisfy { $0.isASCII && $0.isNumber }
    }
}
