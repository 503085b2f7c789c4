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
