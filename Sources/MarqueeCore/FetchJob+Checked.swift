// MARK: - FetchJob + Checked

extension FetchJob {
    /// The job if it passes ``decode(json:)`` of its ``json`` (what the fetch stage will check), with the same
    /// error otherwise: how an adapter checks the follow-up jobs it makes before it sends them.
    ///
    /// The TMDB kinds (a list or search page's twenty follow-ups) are checked value by value with the rules
    /// ``decode(json:)`` applies (``FieldRules``, ``Validate``, `PayloadReader.check`), in its order,
    /// without writing and reading them: their version, kind, list and follow flags always pass, so only the values
    /// that can fail are checked. The others go through ``decode(json:)``.
    ///
    /// - Throws: The ``PayloadError`` ``decode(json:)`` would throw.
    public func checked() throws(PayloadError) -> FetchJob {
        func page(_ page: Int64) throws(PayloadError) {
            try PayloadReader.check(page, field: "page", in: FieldRules.pages)
        }
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
        case .tmdbChanges(_, _, _, _, let settings):
            try self.checkTMDBChanges()
            try follow(settings)
        case .tmdbAccount, .tmdbAccountList:
            try self.checkTMDBAccount()
        default:
            return try Self.decode(json: self.json)
        }
        return self
    }
}

extension FetchJob {
    /// The checks of a `tmdb.changes` job beyond its fields' types, the same for a decoded payload and for a job
    /// an operator or the scheduler builds: both days exist and are written `YYYY-MM-DD`, the end is not before
    /// the start, the window spans at most ``tmdbChangesMaxDays`` days, the page is 1…``tmdbChangesMaxPage`` and
    /// the languages are 1…``tmdbChangesMaxLanguages`` distinct tags. The follow settings are checked apart.
    func checkTMDBChanges() throws(PayloadError) {
        guard case .tmdbChanges(let start, let end, let page, let languages, _) = self else { return }
        let expected = FieldRules.dayExpected
        try PayloadReader.check(start, field: "start_date", maxLength: 10, check: Validate.day, expected: expected)
        try PayloadReader.check(end, field: "end_date", maxLength: 10, check: Validate.day, expected: expected)
        guard let first = LocalDate(parsing: start), let last = LocalDate(parsing: end) else { return }
        guard last >= first else {
            throw PayloadError(.invalidField, field: "end_date", "\(end) is before start_date \(start)")
        }
        let days = last.dayNumber - first.dayNumber + 1
        guard days <= Self.tmdbChangesMaxDays else {
            throw PayloadError(
                .invalidField,
                field: "end_date",
                "\(start)…\(end) spans \(days) days; TMDB's change feed takes at most \(Self.tmdbChangesMaxDays)"
            )
        }
        try PayloadReader.check(page, field: "page", in: 1...Self.tmdbChangesMaxPage)
        guard (1...Self.tmdbChangesMaxLanguages).contains(languages.count) else {
            throw PayloadError(
                .invalidField,
                field: "languages",
                "expected 1 to \(Self.tmdbChangesMaxLanguages) languages, got \(languages.count)"
            )
        }
        for (index, language) in languages.enumerated() {
            try PayloadReader.check(
                language,
                field: "languages[\(index)]",
                maxLength: FieldRules.languageLength,
                check: Validate.language,
                expected: FieldRules.languageExpected
            )
            if languages[..<index].contains(language) {
                throw PayloadError(.invalidField, field: "languages[\(index)]", "'\(language)' is listed twice")
            }
        }
    }
}
