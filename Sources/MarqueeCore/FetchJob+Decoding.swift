public import MarqueeJSON

// MARK: - FetchJob + Decoding

extension FetchJob {
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
            throw PayloadError(
                .unsupportedVersion,
                field: "v",
                "version \(version) is not supported (this build reads \(Self.version))"
            )
        }
        let kind = try reader.string("kind", maxLength: 64)
        let job: FetchJob
        switch kind {
        case "tmdb.list":
            let name = try reader.string(
                "list",
                check: { TMDBList(rawValue: $0) != nil },
                expected: "one of now_playing, popular, top_rated, upcoming"
            )
            job = .tmdbList(
                list: TMDBList(rawValue: name)!,
                page: try reader.optionalInt("page", in: FieldRules.pages) ?? 1,
                language: try reader.language(),
                region: try reader.optionalString(
                    "region",
                    maxLength: FieldRules.regionLength,
                    check: Validate.region,
                    expected: FieldRules.regionExpected
                ),
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
        case "tmdb.changes":
            job = try reader.tmdbChanges()
        case "tmdb.account":
            job = try Self.tmdbAccount(reading: &reader)
        case "tmdb.account.list":
            job = try Self.tmdbAccountList(reading: &reader)
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
                code: try reader.string(
                    "movie_cd",
                    maxLength: 8,
                    check: Validate.koficCode,
                    expected: "an 8-character KOFIC movie code such as 20183782"
                ),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        case "kofic.movies":
            job = try Self.koficMovies(reading: &reader)
        case "kakao.poster":
            job = .kakaoPoster(
                query: try reader.string("query", maxLength: 500),
                movieCode: try reader.optionalString(
                    "movie_cd",
                    maxLength: 8,
                    check: Validate.koficCode,
                    expected: "an 8-character KOFIC movie code such as 20183782"
                )
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
                id: try reader.string(
                    "id",
                    maxLength: 20,
                    check: Validate.openLibraryWork,
                    expected: "a work id such as OL45804W"
                ),
                follow: try Follow(reading: reader.optionalObject("follow"))
            )
        default:
            throw PayloadError(
                .unknownKind,
                field: "kind",
                "unknown kind '\(kind.prefix(64))'; expected one of \(Self.kinds.joined(separator: ", "))"
            )
        }
        try reader.finish()
        return job
    }
}

extension PayloadReader {
    /// The fields of a `tmdb.changes` job: `start_date` and `end_date` (`YYYY-MM-DD`, the end not before the
    /// start, at most ``FetchJob/tmdbChangesMaxDays`` days), `page` (1…1000, default 1), `languages` (1 to 10
    /// distinct language tags, default `["en-US"]`) and `follow`.
    mutating func tmdbChanges() throws(PayloadError) -> FetchJob {
        // Read in the order `FetchJob.checkTMDBChanges` checks, so a payload and a built job that are wrong in
        // the same ways are refused with the same error.
        let start = try self.string(
            "start_date",
            maxLength: 10,
            check: Validate.day,
            expected: FieldRules.dayExpected
        )
        let end = try self.string("end_date", maxLength: 10, check: Validate.day, expected: FieldRules.dayExpected)
        let page = try self.optionalInt("page", in: Int64.min...Int64.max) ?? 1
        var languages = ["en-US"]
        if let values = try self.optionalRawArray("languages") {
            languages = []
            for (index, value) in values.enumerated() {
                guard case .string(let language) = value else {
                    throw PayloadError(
                        .invalidField,
                        field: "languages[\(index)]",
                        "expected a string (\(FieldRules.languageExpected)), got \(value.typeName)"
                    )
                }
                languages.append(language)
            }
        }
        try FetchJob.tmdbChanges(startDate: start, endDate: end, page: page, languages: languages, follow: .none)
            .checkTMDBChanges()
        return .tmdbChanges(
            startDate: start,
            endDate: end,
            page: page,
            languages: languages,
            follow: try Follow(reading: self.optionalObject("follow"))
        )
    }

    /// The `language` field: a language tag such as `ko-KR` (default `en-US`).
    mutating func language() throws(PayloadError) -> String {
        try self.optionalString(
            "language",
            maxLength: FieldRules.languageLength,
            check: Validate.language,
            expected: FieldRules.languageExpected
        )
            ?? "en-US"
    }
}
