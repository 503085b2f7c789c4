/// TMDB's movie change feed over the catalogue: each emulated day a deterministic share of the movies changes
/// (picked from the seed, the day and the movie), and a changed movie's details differ from that day on.
///
/// The details at the catalogue's reference day are each movie's first version; every change day after it up to
/// the emulator's ``EmulatorSettings/today`` is one more revision (its vote count and popularity move, its
/// `Last-Modified` is the change day), so a client's conditional request sees 200 for a movie changed since it
/// last asked and 304 for one that was not. Days on or before the reference day have changes too (the feed's
/// history), but they are already in the first version.
struct ChangeFeed: Sendable {
    let catalogue: Catalogue

    /// Changed movies a day, per thousand movies.
    static let perMille: UInt64 = 20
    /// Ids a page, as TMDB pages the feed.
    static let pageSize = 100
    /// The last page TMDB serves.
    static let maxPage = 1000
    /// The longest window one request may ask for, in days.
    static let maxDays = 14
    /// The most days a revision count looks back (a `today` years ahead costs no more than this).
    static let maxRevisionDays = 3660

    /// Whether the movie at `index` changes on `day`.
    func isChanged(_ index: Int, on day: Day) -> Bool {
        let hash = StableHash.combine(self.catalogue.seed, 0xC4A6, UInt64(bitPattern: Int64(day.value)), UInt64(index))
        return hash % 1000 < Self.perMille
    }

    /// The indices of the movies changed on any day of `days`, ascending.
    func changed(in days: ClosedRange<Int>) -> [Int] {
        (0..<self.catalogue.movieCount).filter { index in days.contains { self.isChanged(index, on: Day($0)) } }
    }

    /// How many times the movie at `index` changed after the reference day up to `today`, and the last such day.
    func revision(of index: Int, through today: Day) -> (count: Int, last: Day?) {
        let first = self.catalogue.referenceDay.value + 1
        guard today.value >= first else { return (0, nil) }
        var count = 0
        var last: Day?
        for value in max(first, today.value - Self.maxRevisionDays)...today.value {
            guard self.isChanged(index, on: Day(value)) else { continue }
            count += 1
            last = Day(value)
        }
        return (count, last)
    }

    /// `movie/changes?start_date&end_date&page`: the ids changed in the window, by id, 100 a page. Without dates
    /// the window is `today` alone (TMDB's last 24 hours); days after `today` have no changes yet. A window of more
    /// than 14 days is refused as TMDB refuses it (422, status_code 20).
    func feed(_ request: EmulatorRequest, today: Day) -> EmulatorResponse {
        func day(_ name: String) -> Result<Day?, Rejection> {
            guard let text = request.query[name], !text.isEmpty else { return .success(nil) }
            guard text.utf8.count == 10, let day = Day(parsing: text) else {
                return .failure(
                    Rejection(TMDB.error(422, code: 23, message: "Invalid date: Format needs to be YYYY-MM-DD."))
                )
            }
            return .success(day)
        }
        let start: Day?
        let end: Day?
        switch (day("start_date"), day("end_date")) {
        case (.success(let a), .success(let b)): (start, end) = (a, b)
        case (.failure(let rejection), _), (_, .failure(let rejection)): return rejection.response
        }
        let last = end ?? max(start ?? today, today)
        let first = start ?? last
        guard first <= last, last.value - first.value + 1 <= Self.maxDays else {
            return TMDB.error(422, code: 20, message: "Invalid date range: Should be a range no longer than 14 days.")
        }
        var page = 1
        if let text = request.query["page"] {
            guard let number = Int(text), (1...Self.maxPage).contains(number) else {
                return TMDB.errors(["page must be less than or equal to \(Self.maxPage)"])
            }
            page = number
        }
        let through = min(last.value, today.value)
        let indices = through < first.value ? [] : self.changed(in: first.value...through)
        let ids = indices.map { self.catalogue.cores[$0] }.sorted { $0.id < $1.id }
        let total = min(ids.count, Self.pageSize * Self.maxPage)
        let offset = (page - 1) * Self.pageSize
        let slice = offset < total ? ids[offset..<min(offset + Self.pageSize, total)] : []
        let results = slice.map { JSON.object([("id", .int($0.id)), ("adult", .bool($0.isAdult))]) }
        return .json(
            .object([
                ("results", .array(results)),
                ("page", .int(page)),
                ("total_pages", .int((total + Self.pageSize - 1) / Self.pageSize)),
                ("total_results", .int(total)),
            ])
        )
    }
}
