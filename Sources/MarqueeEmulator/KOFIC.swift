import func Foundation.exp

/// KOFIC's part of the catalogue: which movies have a KOFIC movie code, and when they opened in Korea.
struct KoficPool: Sendable {
    struct Entry: Sendable {
        let movieIndex: Int
        let code: Int
        let open: Day
        /// Opening-day audience scale.
        let weight: Double
        /// Average ticket price (won).
        let price: Int
        let isKorean: Bool
    }

    /// By opening day, ascending.
    let entries: [Entry]
    let byCode: [Int: Int]
    let byMovie: [Int: Int]
    let seed: UInt64

    init(seed: UInt64, cores: [MovieCore], byRelease: [Int32]) {
        self.seed = seed
        var entries: [Entry] = []
        var perYear: [Int: Int] = [:]
        for movieIndex in byRelease.map(Int.init) {
            let core = cores[movieIndex]
            let roll = StableHash.unit(seed, 0xC0F1C, UInt64(movieIndex))
            let include: Bool
            switch core.originalLanguage {
            case "ko": include = true
            case "en": include = roll < 0.35
            case "ja": include = roll < 0.25
            default: include = roll < 0.1
            }
            guard include, let open = core.release else { continue }
            let year = open.year
            let number = perYear[year, default: 1000 + Int(StableHash.combine(seed, UInt64(year)) % 2000)]
            guard number < 10_000 else { continue }
            perYear[year] = number + 1 + Int(StableHash.combine(seed, 0x57E9, UInt64(movieIndex)) % 3)
            var random = SeededRandom(seed, 0xB0C5, UInt64(movieIndex))
            let heat = exp(random.unit() * 5)  // 1 … 148
            entries.append(
                Entry(
                    movieIndex: movieIndex,
                    code: year * 10_000 + number,
                    open: open,
                    weight: 1500 * heat * (core.originalLanguage == "ko" ? 1.3 : 1),
                    price: 8000 + random.int(0...40) * 100,
                    isKorean: core.originalLanguage == "ko"
                )
            )
        }
        self.entries = entries
        self.byCode = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.code, $0) })
        self.byMovie = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.movieIndex, $0) })
    }

    /// Audience of `entry` on `day`: previews from three days before opening, then a decaying run with weekend
    /// peaks, a long tail of re-screenings, and day-to-day noise.
    func audience(_ entry: Entry, on day: Day) -> Int {
        let age = day.value - entry.open.value
        if age < -3 { return 0 }
        let noise =
            0.85 + 0.3 * StableHash.unit(self.seed, 0xA0D1, UInt64(entry.code), UInt64(bitPattern: Int64(day.value)))
        if age < 0 { return Int(entry.weight * 0.04 * noise) }
        let weekend = day.weekday >= 4 ? 1.9 : 1.0
        let run = entry.weight * exp(-Double(age) / 18) * weekend * noise
        let tail = 20 + Double(StableHash.combine(self.seed, UInt64(entry.code)) % 60)
        return Int(max(run, tail * noise))
    }

    /// Movies that can be on the chart on `day`: the 60 latest openings up to three days after it.
    func candidates(on day: Day) -> ArraySlice<Entry> {
        var low = 0
        var high = self.entries.count
        while low < high {
            let middle = (low + high) / 2
            if self.entries[middle].open.value <= day.value + 3 { low = middle + 1 } else { high = middle }
        }
        return self.entries[max(0, low - 60)..<low]
    }
}

/// KOFIC (kobis) open API responses: daily and weekly box office, movie info, movie list.
struct KOFIC: Sendable {
    let catalogue: Catalogue

    var pool: KoficPool { self.catalogue.kofic }

    static func fault(_ code: String, _ message: String, status: Int = 200) -> EmulatorResponse {
        .json(
            .object([("faultInfo", .object([("message", .string(message)), ("errorCode", .string(code))]))]),
            status: status
        )
    }

    static let invalidKey = Self.fault("320010", "유효하지않은 키값입니다.")
    static let quotaExceeded = Self.fault("320011", "키 사용량이 초과되었습니다.")
    static func badParameter(_ name: String) -> EmulatorResponse {
        Self.fault("320105", "\(name) 파라미터가 올바르지 않습니다.")
    }

    // MARK: - Box office

    private struct Row {
        let entry: KoficPool.Entry
        let audience: Int
        let sales: Int
        let previousAudience: Int
        let previousSales: Int
        let audienceAccumulated: Int
        let salesAccumulated: Int
        let screens: Int
        let shows: Int
    }

    private func days(_ range: ClosedRange<Int>) -> [Day] { range.map(Day.init) }

    /// The chart over `days` (one day, or a week's part), with the same for the period before it.
    private func chart(
        _ days: ClosedRange<Int>,
        previous: ClosedRange<Int>,
        limit: Int,
        nation: String?
    )
        -> (rows: [Row], previousRanks: [Int: Int], totalSales: Int)
    {
        let end = Day(days.upperBound)
        let candidates = self.pool.candidates(on: end).filter { entry in
            switch nation {
            case "K": entry.isKorean
            case "F": !entry.isKorean
            default: true
            }
        }
        func audience(_ entry: KoficPool.Entry, _ range: ClosedRange<Int>) -> Int {
            range.reduce(0) { $0 + self.pool.audience(entry, on: Day($1)) }
        }
        var rows: [Row] = []
        var totalSales = 0
        for entry in candidates {
            let now = audience(entry, days)
            guard now > 0 else { continue }
            let before = audience(entry, previous)
            var accumulated = 0
            for day in max(entry.open.value - 3, days.upperBound - 500)...days.upperBound {
                accumulated += self.pool.audience(entry, on: Day(day))
            }
            let screens = max(1, min(2800, Int(Double(now / max(1, days.count)).squareRoot() * 4)))
            rows.append(
                Row(
                    entry: entry,
                    audience: now,
                    sales: now * entry.price,
                    previousAudience: before,
                    previousSales: before * entry.price,
                    audienceAccumulated: accumulated,
                    salesAccumulated: accumulated * entry.price,
                    screens: screens,
                    shows: screens * (3 + entry.code % 3) * days.count
                )
            )
            totalSales += now * entry.price
        }
        rows.sort { $0.sales != $1.sales ? $0.sales > $1.sales : $0.entry.code < $1.entry.code }
        // Last period's ranks, among the same candidates.
        let previousOrder = candidates.map { ($0.code, audience($0, previous) * $0.price) }
            .filter { $0.1 > 0 }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
            .prefix(limit)
        var previousRanks: [Int: Int] = [:]
        for (rank, item) in previousOrder.enumerated() { previousRanks[item.0] = rank + 1 }
        return (Array(rows.prefix(limit)), previousRanks, totalSales)
    }

    static func change(_ now: Int, _ before: Int) -> String {
        guard before != 0 else { return "100" }
        let value = (Double(now - before) / Double(before) * 1000).rounded() / 10
        let text = String(value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    static func share(_ part: Int, _ total: Int) -> String {
        guard total > 0 else { return "0" }
        let text = String((Double(part) / Double(total) * 1000).rounded() / 10)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    private func entries(_ chart: (rows: [Row], previousRanks: [Int: Int], totalSales: Int)) -> [JSON] {
        chart.rows.enumerated().map { offset, row in
            let rank = offset + 1
            let previousRank = chart.previousRanks[row.entry.code]
            let movie = self.catalogue.movie(at: row.entry.movieIndex)
            return .object([
                ("rnum", .string(String(rank))),
                ("rank", .string(String(rank))),
                ("rankInten", .string(String(previousRank.map { $0 - rank } ?? 0))),
                ("rankOldAndNew", .string(previousRank == nil ? "NEW" : "OLD")),
                ("movieCd", .string(String(row.entry.code))),
                ("movieNm", .string(movie.title(.ko))),
                ("openDt", .string(row.entry.open.iso)),
                ("salesAmt", .string(String(row.sales))),
                ("salesShare", .string(Self.share(row.sales, chart.totalSales))),
                ("salesInten", .string(String(row.sales - row.previousSales))),
                ("salesChange", .string(Self.change(row.sales, row.previousSales))),
                ("salesAcc", .string(String(row.salesAccumulated))),
                ("audiCnt", .string(String(row.audience))),
                ("audiInten", .string(String(row.audience - row.previousAudience))),
                ("audiChange", .string(Self.change(row.audience, row.previousAudience))),
                ("audiAcc", .string(String(row.audienceAccumulated))),
                ("scrnCnt", .string(String(row.screens))),
                ("showCnt", .string(String(row.shows))),
            ])
        }
    }

    private func limit(_ request: EmulatorRequest) -> Int { min(max(request.int("itemPerPage") ?? 10, 1), 10) }

    /// `boxoffice/searchDailyBoxOfficeList.json`.
    func daily(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let text = request.query["targetDt"], let day = Day(parsing: text) else {
            return Self.badParameter("targetDt")
        }
        let chart = self.chart(
            day.value...day.value,
            previous: (day.value - 1)...(day.value - 1),
            limit: self.limit(request),
            nation: request.query["repNationCd"]
        )
        return .json(
            .object([
                (
                    "boxOfficeResult",
                    .object([
                        ("boxofficeType", .string("일별 박스오피스")),
                        ("showRange", .string("\(day.compact)~\(day.compact)")),
                        ("dailyBoxOfficeList", .array(self.entries(chart))),
                    ])
                )
            ]),
            lastModified: day.adding(1).epochSeconds + 6 * 3600
        )
    }

    /// `boxoffice/searchWeeklyBoxOfficeList.json` (`weekGb` 0 = Monday–Sunday, 1 = Friday–Sunday, 2 = Monday–Thursday).
    func weekly(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let text = request.query["targetDt"], let day = Day(parsing: text) else {
            return Self.badParameter("targetDt")
        }
        let weekGb = request.query["weekGb"] ?? "1"
        let monday = day.adding(-day.weekday)
        let range: ClosedRange<Int>
        let type: String
        switch weekGb {
        case "0":
            range = monday.value...(monday.value + 6)
            type = "주간 박스오피스"
        case "1":
            range = (monday.value + 4)...(monday.value + 6)
            type = "주말 박스오피스"
        case "2":
            range = monday.value...(monday.value + 3)
            type = "주중 박스오피스"
        default:
            return Self.badParameter("weekGb")
        }
        let chart = self.chart(
            range,
            previous: (range.lowerBound - 7)...(range.upperBound - 7),
            limit: self.limit(request),
            nation: request.query["repNationCd"]
        )
        // ISO week number of the week's Thursday.
        let thursday = monday.adding(3)
        let week = (thursday.value - Day(year: thursday.year, month: 1, day: 1).value) / 7 + 1
        return .json(
            .object([
                (
                    "boxOfficeResult",
                    .object([
                        ("boxofficeType", .string(type)),
                        ("showRange", .string("\(Day(range.lowerBound).compact)~\(Day(range.upperBound).compact)")),
                        ("yearWeekTime", .string("\(thursday.year)\(Day.pad(week, 2))")),
                        ("weeklyBoxOfficeList", .array(self.entries(chart))),
                    ])
                )
            ]),
            lastModified: Day(range.upperBound).adding(1).epochSeconds + 6 * 3600
        )
    }

    // MARK: - Movies

    private static let nations: [String: String] = [
        "ko": "한국", "en": "미국", "ja": "일본", "fr": "프랑스", "es": "스페인", "hi": "인도", "it": "이탈리아",
        "zh": "중국", "de": "독일",
    ]

    private static let romanizedSurnames: [String: String] = [
        "김": "KIM", "이": "LEE", "박": "PARK", "최": "CHOI", "정": "JUNG", "강": "KANG", "조": "CHO", "윤": "YOON",
        "장": "JANG", "임": "LIM", "한": "HAN", "오": "OH",
    ]

    private func person(_ random: inout SeededRandom, korean: Bool) -> (name: String, english: String) {
        if korean {
            let name = TextGenerator.koreanName(&random)
            let surname = Self.romanizedSurnames[String(name.prefix(1))] ?? "KIM"
            let given = TextGenerator.latinTitle(&random).split(separator: " ").first.map(String.init) ?? "Min"
            return (name, random.chance(0.3) ? "" : "\(surname) \(given)")
        }
        let english = TextGenerator.englishName(&random)
        return (TextGenerator.koreanWord(&random, syllables: 2...2) + " " + TextGenerator.koreanWord(&random), english)
    }

    /// What a movie's info draws from its seeded stream before the fields that only the info shows: the movie
    /// list shows the same director and distributor as the movie's info.
    private struct Credits {
        var director: (name: String, english: String)
        var actors: [JSON]
        var staffs: [JSON]
        var distributor: String
        var runtime: Int
        /// The stream, where the info's remaining fields continue it.
        var random: SeededRandom
    }

    private func credits(_ entry: KoficPool.Entry) -> Credits {
        var random = SeededRandom(self.catalogue.seed, 0x1AF0, UInt64(entry.code))
        let korean = entry.isKorean
        let director = self.person(&random, korean: korean)
        let actors: [JSON] = (0..<random.int(0...12)).map { _ in
            let actor = self.person(&random, korean: korean)
            let cast = random.chance(0.5) ? "" : TextGenerator.koreanWord(&random)
            return .object([
                ("peopleNm", .string(actor.name)), ("peopleNmEn", .string(actor.english)),
                ("cast", .string(cast)), ("castEn", .string("")),
            ])
        }
        let staffs: [JSON] = (0..<(random.chance(0.4) ? 0 : random.int(1...20))).map { _ in
            let staff = self.person(&random, korean: korean)
            return .object([
                ("peopleNm", .string(staff.name)), ("peopleNmEn", .string(staff.english)),
                ("staffRoleNm", .string(random.pick(["각본", "촬영", "조명", "편집", "음악", "미술", "투자", "제작"]))),
            ])
        }
        let distributor = "\(TextGenerator.koreanWord(&random))엔터테인먼트(주)"
        let runtime = random.int(80...170)
        // Drawn for the stream's sake: the production year is ``productionYear(_:)``, which the list filters on.
        _ = random.chance(0.2)
        return Credits(
            director: director,
            actors: actors,
            staffs: staffs,
            distributor: distributor,
            runtime: runtime,
            random: random
        )
    }

    /// The production year: the opening year, or the year before for one movie in five.
    private func productionYear(_ entry: KoficPool.Entry) -> Int {
        entry.open.year - (StableHash.unit(self.catalogue.seed, 0x9D7E, UInt64(entry.code)) < 0.2 ? 1 : 0)
    }

    /// The distributor's company code.
    private static func companyCode(_ entry: KoficPool.Entry) -> String { String(20_100_000 + entry.code % 90_000) }

    /// `movie/searchMovieInfo.json`.
    func movieInfo(_ request: EmulatorRequest) -> EmulatorResponse {
        guard let text = request.query["movieCd"], let code = Int(text), let position = self.pool.byCode[code] else {
            return Self.badParameter("movieCd")
        }
        let entry = self.pool.entries[position]
        let movie = self.catalogue.movie(at: entry.movieIndex)
        let credits = self.credits(entry)
        var random = credits.random
        let korean = entry.isKorean
        let nation = Self.nations[movie.core.originalLanguage] ?? "미국"
        let genres = movie.genreIDs.compactMap { id in Genres.all.first { $0.id == id } }
        let director = credits.director
        let actors = credits.actors
        let staffs = credits.staffs
        let distributor = credits.distributor
        let grades = ["전체관람가", "12세이상관람가", "15세이상관람가", "청소년관람불가"]
        let released = entry.open <= self.catalogue.referenceDay
        let info: JSON = .object([
            ("movieCd", .string(String(entry.code))),
            ("movieNm", .string(movie.title(.ko))),
            ("movieNmEn", .string(movie.title(.en))),
            ("movieNmOg", .string(korean || movie.core.originalLanguage == "en" ? "" : movie.originalTitle)),
            ("showTm", .string(String(credits.runtime))),
            ("prdtYear", .string(String(self.productionYear(entry)))),
            ("openDt", .string(entry.open.compact)),
            ("prdtStatNm", .string(released ? "개봉" : "개봉예정")),
            ("typeNm", .string("장편")),
            ("nations", .array([.object([("nationNm", .string(nation))])])),
            ("genres", .array(genres.map { .object([("genreNm", .string($0.kofic))]) })),
            (
                "directors",
                .array([.object([("peopleNm", .string(director.name)), ("peopleNmEn", .string(director.english))])])
            ),
            ("actors", .array(actors)),
            ("showTypes", .array([.object([("showTypeGroupNm", .string("2D")), ("showTypeNm", .string("디지털"))])])),
            (
                "companys",
                .array([
                    .object([
                        ("companyCd", .string(Self.companyCode(entry))),
                        ("companyNm", .string(distributor)),
                        (
                            "companyNmEn",
                            .string(random.chance(0.3) ? "" : "\(random.pick(TextGenerator.nouns)) Entertainment")
                        ),
                        ("companyPartNm", .string("배급사")),
                    ])
                ])
            ),
            (
                "audits",
                .array([
                    .object([
                        ("auditNo", .string("\(entry.open.year)-MF\(Day.pad(entry.code % 10_000, 5)) ")),
                        ("watchGradeNm", .string(random.pick(grades))),
                    ])
                ])
            ),
            ("staffs", .array(staffs)),
        ])
        return .json(
            .object([("movieInfoResult", .object([("movieInfo", info), ("source", .string("영화진흥위원회"))]))]),
            lastModified: movie.lastModified
        )
    }

    /// `movie/searchMovieList.json`: the catalogue, newest opening first, filtered by `openStartDt`/`openEndDt`
    /// (opening years), `prdtStartYear`/`prdtEndYear` (production years), `movieNm` (part of the Korean title) and
    /// `directorNm` (part of the director's name), `itemPerPage` (1…100, default 10) movies from page `curPage`.
    /// A parameter that is not a number (or a year) where one is expected is KOFIC's parameter fault.
    func movieList(_ request: EmulatorRequest) -> EmulatorResponse {
        func number(_ name: String, in range: ClosedRange<Int>) -> (value: Int?, isValid: Bool) {
            guard let text = request.query[name], !text.trimmingSpaces.isEmpty else { return (nil, true) }
            guard let value = Int(text.trimmingSpaces), range.contains(value) else { return (nil, false) }
            return (value, true)
        }
        let page = number("curPage", in: 1...Int(Int32.max))
        let perPage = number("itemPerPage", in: 1...100)
        let openStart = number("openStartDt", in: 1000...9999)
        let openEnd = number("openEndDt", in: 1000...9999)
        let productionStart = number("prdtStartYear", in: 1000...9999)
        let productionEnd = number("prdtEndYear", in: 1000...9999)
        for (name, parsed) in [
            ("curPage", page), ("itemPerPage", perPage), ("openStartDt", openStart), ("openEndDt", openEnd),
            ("prdtStartYear", productionStart), ("prdtEndYear", productionEnd),
        ] where !parsed.isValid {
            return Self.badParameter(name)
        }
        func text(_ name: String) -> String? {
            request.query[name].map { $0.trimmingSpaces.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let name = text("movieNm")
        let directorName = text("directorNm")
        var matches: [KoficPool.Entry] = []
        for entry in self.pool.entries.reversed() {
            let year = entry.open.year
            if let start = openStart.value, year < start { continue }
            if let end = openEnd.value, year > end { continue }
            if productionStart.value != nil || productionEnd.value != nil {
                let production = self.productionYear(entry)
                if let start = productionStart.value, production < start { continue }
                if let end = productionEnd.value, production > end { continue }
            }
            if let name, !self.catalogue.movie(at: entry.movieIndex).title(.ko).lowercased().contains(name) {
                continue
            }
            if let directorName {
                // The director is the first draw of the movie's stream (``credits(_:)``).
                var random = SeededRandom(self.catalogue.seed, 0x1AF0, UInt64(entry.code))
                guard self.person(&random, korean: entry.isKorean).name.lowercased().contains(directorName) else {
                    continue
                }
            }
            matches.append(entry)
        }
        let size = perPage.value ?? 10
        let start = ((page.value ?? 1) - 1) * size
        let slice = start < matches.count ? matches[start..<min(matches.count, start + size)] : []
        let list: [JSON] = slice.map { entry in
            let movie = self.catalogue.movie(at: entry.movieIndex)
            let credits = self.credits(entry)
            let genres = movie.genreIDs.compactMap { id in Genres.all.first { $0.id == id }?.kofic }
            let nation = Self.nations[movie.core.originalLanguage] ?? "미국"
            let released = entry.open <= self.catalogue.referenceDay
            return .object([
                ("movieCd", .string(String(entry.code))),
                ("movieNm", .string(movie.title(.ko))),
                ("movieNmEn", .string(movie.title(.en))),
                ("prdtYear", .string(String(self.productionYear(entry)))),
                ("openDt", .string(entry.open.compact)),
                ("typeNm", .string("장편")),
                ("prdtStatNm", .string(released ? "개봉" : "개봉예정")),
                ("nationAlt", .string(nation)),
                ("genreAlt", .string(genres.joined(separator: ","))),
                ("repNationNm", .string(nation)),
                ("repGenreNm", .string(genres.first ?? "")),
                ("directors", .array([.object([("peopleNm", .string(credits.director.name))])])),
                (
                    "companys",
                    // KOFIC lists a film's companies once its distributor is known: the released ones here.
                    .array(
                        released
                            ? [
                                .object([
                                    ("companyCd", .string(Self.companyCode(entry))),
                                    ("companyNm", .string(credits.distributor)),
                                ])
                            ] : []
                    )
                ),
            ])
        }
        return .json(
            .object([
                (
                    "movieListResult",
                    .object([
                        ("totCnt", .int(matches.count)),
                        ("source", .string("영화진흥위원회")),
                        ("movieList", .array(list)),
                    ])
                )
            ]),
            lastModified: self.catalogue.referenceDay.epochSeconds
        )
    }
}
