import MarqueeJSON

// MARK: - FetchJob + KOFICMovies

extension FetchJob {
    /// The filters and paging of a `kofic.movies` crawl over KOFIC's catalogue (`movie/searchMovieList.json`).
    ///
    /// Years are KOFIC's (`openStartDt`/`openEndDt` are opening years, `prdtStartYear`/`prdtEndYear` production
    /// years); text filters match part of the title (`movieNm`) or a director's name (`directorNm`). Page 1 of a
    /// crawl queues every further page up to the end of the list (`totCnt`), but never past ``lastPage``.
    public struct KOFICMovieQuery: Hashable, Sendable {
        /// The first opening year (`openStartDt`).
        public var openFrom: Int64?
        /// The last opening year (`openEndDt`).
        public var openTo: Int64?
        /// The first production year (`prdtStartYear`).
        public var productionFrom: Int64?
        /// The last production year (`prdtEndYear`).
        public var productionTo: Int64?
        /// Part of the Korean title (`movieNm`).
        public var title: String?
        /// Part of a director's name (`directorNm`).
        public var director: String?
        /// Movies per page (`itemPerPage`, 1…100). Default: 100.
        public var perPage: Int64
        /// The last page page 1 queues (1…1000). Default: 1000, KOFIC's list to its end for any filter a crawl
        /// can name (100,000 movies at 100 a page).
        public var lastPage: Int64

        /// The most movies KOFIC lists on one page.
        public static let maxPerPage: Int64 = 100
        /// The last page a crawl may reach: the bound that keeps a runaway `totCnt` from queueing without end.
        public static let maxPage: Int64 = 1000
        /// The longest title or director filter.
        public static let maxTextLength = 100

        /// Creates a query; every filter is optional.
        public init(
            openFrom: Int64? = nil,
            openTo: Int64? = nil,
            productionFrom: Int64? = nil,
            productionTo: Int64? = nil,
            title: String? = nil,
            director: String? = nil,
            perPage: Int64 = Self.maxPerPage,
            lastPage: Int64 = Self.maxPage
        ) {
            self.openFrom = openFrom
            self.openTo = openTo
            self.productionFrom = productionFrom
            self.productionTo = productionTo
            self.title = title
            self.director = director
            self.perPage = perPage
            self.lastPage = lastPage
        }

        /// The part of the message key that names the filters (the page is added by ``FetchJob/dedupeKey``); the
        /// free-text filters come last, so a colon in them cannot make two queries' keys equal.
        var keyPart: String {
            func span(_ from: Int64?, _ to: Int64?) -> String {
                "\(from.map(String.init) ?? "")-\(to.map(String.init) ?? "")"
            }
            return "open=\(span(self.openFrom, self.openTo)):prdt=\(span(self.productionFrom, self.productionTo))"
                + ":per=\(self.perPage):director=\(self.director ?? ""):title=\(self.title ?? "")"
        }

        /// Reads the query's fields from a `kofic.movies` payload (``FetchJob/decode(json:)``).
        init(reading reader: inout PayloadReader) throws(PayloadError) {
            self.init(
                openFrom: try reader.optionalInt("open_from", in: FieldRules.years),
                openTo: try reader.optionalInt("open_to", in: FieldRules.years),
                productionFrom: try reader.optionalInt("production_from", in: FieldRules.years),
                productionTo: try reader.optionalInt("production_to", in: FieldRules.years),
                title: try reader.optionalString("title", maxLength: Self.maxTextLength),
                director: try reader.optionalString("director", maxLength: Self.maxTextLength),
                perPage: try reader.optionalInt("per_page", in: 1...Self.maxPerPage) ?? Self.maxPerPage,
                lastPage: try reader.optionalInt("last_page", in: 1...Self.maxPage) ?? Self.maxPage
            )
            try Self.ordered(self.openFrom, self.openTo, from: "open_from", to: "open_to")
            try Self.ordered(self.productionFrom, self.productionTo, from: "production_from", to: "production_to")
        }

        private static func ordered(
            _ from: Int64?,
            _ to: Int64?,
            from fromName: String,
            to toName: String
        )
            throws(PayloadError)
        {
            guard let from, let to, to < from else { return }
            throw PayloadError(.invalidField, field: toName, "\(toName) \(to) is before \(fromName) \(from)")
        }

        /// Writes the query's fields into a payload (``FetchJob/json``); defaults are left out.
        func write(into fields: inout JSONObject) {
            if let openFrom { fields["open_from"] = .integer(openFrom) }
            if let openTo { fields["open_to"] = .integer(openTo) }
            if let productionFrom { fields["production_from"] = .integer(productionFrom) }
            if let productionTo { fields["production_to"] = .integer(productionTo) }
            if let title { fields["title"] = .string(title) }
            if let director { fields["director"] = .string(director) }
            if self.perPage != Self.maxPerPage { fields["per_page"] = .integer(self.perPage) }
            if self.lastPage != Self.maxPage { fields["last_page"] = .integer(self.lastPage) }
        }
    }

    /// Decodes the fields of a `kofic.movies` payload after its `v` and `kind`.
    static func koficMovies(reading reader: inout PayloadReader) throws(PayloadError) -> FetchJob {
        let page = try reader.optionalInt("page", in: 1...KOFICMovieQuery.maxPage) ?? 1
        let query = try KOFICMovieQuery(reading: &reader)
        let follow = try Follow(reading: reader.optionalObject("follow"))
        // The crawl's extent is `last_page`: a second page count would say something else.
        guard follow.pages == 1 else {
            throw PayloadError(
                .invalidField,
                field: "follow.pages",
                "a kofic.movies crawl runs to the end of the list; bound it with last_page, not follow.pages"
            )
        }
        return .koficMovies(query: query, page: page, follow: follow)
    }
}
