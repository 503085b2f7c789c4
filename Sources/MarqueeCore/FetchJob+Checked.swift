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
        default:
            return try Self.decode(json: self.json)
        }
        return self
    }
}
