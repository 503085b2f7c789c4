import ArgumentParser
import Logging
import MarqueeOperations
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import class Foundation.FileManager
import class Foundation.JSONEncoder

/// `marquee query`: reads the catalogue store (docs/query.md). It never writes: no migration, no file created.
struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the catalogue: movies, a movie's details, box office, books, row counts.",
        discussion: """
            Reads the store the indexer writes (--store, else $MARQUEE_STORE, else sqlite:./var/marquee.db) and \
            prints aligned tables, or one JSON document with --json. Nothing found is not an error: a message \
            on standard error (tables) or [] / null (JSON), exit 0. A store that cannot be read exits 1.

            Examples:
              marquee query movies 기생충
              marquee query movies 君の名 --language ja-JP --json
              marquee query movie 496243 --language ko-KR
              marquee query box-office --weekend --date 2024-01-13
              marquee query books --author tolkien
              marquee query counts --store postgres://marquee@127.0.0.1:15432/marquee
            """,
        subcommands: [Movies.self, Movie.self, BoxOffice.self, Books.self, Counts.self]
    )
}

// MARK: - Shared options

/// The options every `marquee query` subcommand shares: where the store is, and the output form.
struct QueryOptions: ParsableArguments {
    @OptionGroup var settings: SettingsOptions

    @Option(name: .long, help: ArgumentHelp(Catalogue.store, valueName: "location"))
    var store: String?

    @Flag(name: .long, help: "Print one JSON document (snake_case keys) on standard output instead of tables.")
    var json = false

    @Option(name: .long, help: "Seconds to wait for the store before giving up.")
    var timeout = 10

    func validate() throws {
        guard self.timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
        try WorkerOptions.validate(flags: Settings.flags([(Catalogue.store, self.store)]), of: [Catalogue.store])
    }

    /// `--store`, else `MARQUEE_STORE` (or its `_FILE`), else the settings file, else the embedded default. Read
    /// here rather than as the option's default value so `--help` never shows a password from the environment.
    var locationText: String {
        (try? self.settings.settings(flags: Settings.flags([(Catalogue.store, self.store)])).value(Catalogue.store))
            ?? StoreLocation.defaultValue
    }

    /// Opens the store read-only in spirit (nothing is migrated or created), checks it has a schema, runs `body`
    /// within `--timeout`, and closes the store.
    ///
    /// Every failure becomes one line on standard error and its ``ExitStatus``.
    func withStore(_ body: @escaping @Sendable (Store) async throws -> Void) async throws {
        let location: StoreLocation
        do {
            location = try StoreLocation(parsing: self.locationText)
        } catch {
            throw fail("\(error.message) (--store or MARQUEE_STORE)", status: .configuration)
        }
        // Opening a missing SQLite file would create it (and its folder): a query must not.
        if case .sqlite(let path) = location.engine, !FileManager.default.fileExists(atPath: path) {
            throw fail(
                "no store at \(location) (the file does not exist): run marquee-index (or make run) first, "
                    + "or check --store",
                status: .noInput
            )
        }
        let store: Store
        do {
            store = try Store.open(location, maximumConnections: 1, logger: Self.logger)
        } catch {
            throw fail(error.message, status: .configuration)
        }
        let timeout = self.timeout
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    guard try await store.schemaVersion() != nil else {
                        throw Failure("the store at \(location) is empty: run marquee-index (or make run) first", status: .noInput)
                    }
                    try await body(store)
                }
                group.addTask {
                    // postgres-nio's pool keeps retrying a server it cannot reach or log in to (a missing database
                    // included) without failing the query: the timeout turns that into an answer.
                    try await Task.sleep(for: .seconds(timeout))
                    let hint =
                        location.engineName == "postgres"
                        ? "is PostgreSQL running there, and do the user and database exist?"
                        : "is another process holding a lock on it?"
                    throw Failure("the store at \(location) did not answer within \(timeout) s (\(hint))", status: .unavailable)
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await store.close()
            throw fail(
                (error as? Failure)?.message ?? (error as? StoreError)?.message ?? "\(error)",
                status: (error as? Failure)?.status ?? .failure
            )
        }
        await store.close()
    }

    /// A failure already worded for the operator.
    struct Failure: Error {
        var message: String
        var status: ExitStatus
        init(_ message: String, status: ExitStatus = .failure) {
            self.message = message
            self.status = status
        }
    }


    private static var logger: Logger {
        var logger = Logger(label: "marquee")
        // Failures reach the operator as one line on exit; the connection pool's own lines stay quiet.
        logger.logLevel = .critical
        return logger
    }

    func printJSON(_ value: some Encodable) throws {
        try MarqueeCLI.printJSON(value)
    }

    /// Says on standard error that nothing was found (exit code 0).
    func nothingFound(_ message: String) {
        var standardError = StandardError()
        print(message, to: &standardError)
    }
}

// MARK: - Subcommands

extension Query {
    struct Movies: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find TMDB movies whose title contains a text, in any language.",
            discussion: """
                Localized and original titles are compared folded: case, full-width forms, spaces and punctuation \
                are ignored, so 기생 finds 기생충 and "spider man" finds Spider-Man. Most popular first.

                Examples:
                  marquee query movies 기생충
                  marquee query movies 千と千尋 --language ko-KR
                  marquee query movies "star wars" --limit 5 --json
                """
        )

        @OptionGroup var options: QueryOptions

        @Argument(help: "Part of a title.")
        var title: String

        @Option(help: "Show titles in this language (ko-KR, or ko for any Korean). Default: any.")
        var language: String?

        @Option(help: "At most this many movies (1–\(Store.maximumLimit)).")
        var limit = 20

        func validate() throws {
            try validateSearch(self.title, name: "the title")
            try validateLimit(self.limit)
        }

        func run() async throws {
            let (options, title, language, limit) = (self.options, self.title, self.language, self.limit)
            try await options.withStore { store in
                let movies = try await store.movies(titleContaining: title, language: language, limit: limit)
                if options.json { return try options.printJSON(movies) }
                guard !movies.isEmpty else {
                    return options.nothingFound("no movie title contains '\(title)' in \(store.location)")
                }
                var table = TextTable([
                    .init(header: "ID", alignment: .right), .init(header: "TITLE"), .init(header: "ORIGINAL TITLE"),
                    .init(header: "RELEASED"), .init(header: "POPULARITY", alignment: .right),
                    .init(header: "VOTE", alignment: .right), .init(header: "LANGUAGES"),
                ])
                for movie in movies {
                    table.append([
                        "\(movie.movieID)", movie.title ?? "–", movie.originalTitle ?? "–", movie.releaseDate ?? "–",
                        Format.decimal(movie.popularity, digits: 1), Format.decimal(movie.voteAverage, digits: 1),
                        movie.languages.joined(separator: " "),
                    ])
                }
                print(table.render())
                let more = movies.count == limit ? " (the first \(limit): --limit shows more)" : ""
                print(
                    "\(Format.count(movies.count, "movie")) whose title contains '\(title)', most popular first\(more)"
                )
            }
        }
    }

    struct Movie: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show everything stored about one TMDB movie.",
            discussion: """
                Facts, titles and taglines per language, genres, reviews (the first 300 characters), stored \
                images with their variants, and the KOFIC movies linked to it.

                Examples:
                  marquee query movie 496243
                  marquee query movie 496243 --language ko-KR --json
                """
        )

        @OptionGroup var options: QueryOptions

        @Argument(help: "TMDB's movie id.")
        var id: Int64

        @Option(help: "Show the title and genre names in this language (ko-KR, or ko). Default: any.")
        var language: String?

        func validate() throws {
            guard self.id > 0 else { throw ValidationError("the movie id must be a positive number") }
        }

        func run() async throws {
            let (options, id, language) = (self.options, self.id, self.language)
            try await options.withStore { store in
                let movie = try await store.movie(id: id, language: language)
                if options.json { return try options.printJSON(movie) }
                guard let movie else { return options.nothingFound("no movie \(id) in \(store.location)") }
                print(Self.render(movie))
            }
        }

        static func render(_ movie: MovieDetails) -> String {
            var lines: [String] = []
            var heading = movie.title ?? movie.originalTitle ?? "(no title)"
            if let original = movie.originalTitle, original != heading { heading += " (\(original))" }
            lines.append("\(heading) — TMDB \(movie.movieID)")
            var facts = TextTable([.init(header: "", maxWidth: 20), .init(header: "", maxWidth: 100)])
            func fact(_ name: String, _ value: String?) {
                if let value, !value.isEmpty { facts.append([name, value]) }
            }
            fact(
                "original title",
                movie.originalTitle.map { title in movie.originalLanguage.map { "\(title) [\($0)]" } ?? title }
            )
            fact("released", movie.releaseDate)
            fact("runtime", movie.facts?.runtime.map { "\($0) min" })
            fact("genres", movie.genres.map { $0.name ?? "#\($0.genreID)" }.joined(separator: ", "))
            fact("popularity", movie.popularity.map { Format.decimal($0, digits: 1) })
            fact(
                "votes",
                movie.voteAverage.map { average in
                    Format.decimal(average, digits: 1)
                        + (movie.voteCount.map { " (\(Format.grouped($0)) votes)" } ?? "")
                }
            )
            fact("status", movie.facts?.status)
            fact("budget", movie.facts?.budget.map { "$" + Format.grouped($0) })
            fact("revenue", movie.facts?.revenue.map { "$" + Format.grouped($0) })
            fact("imdb", movie.facts?.imdbID)
            fact("countries", movie.facts?.productionCountries.joined(separator: ", "))
            fact("adult", movie.isAdult == true ? "yes" : nil)
            lines.append(facts.render(showingHeader: false))

            if !movie.localized.isEmpty {
                var titles = TextTable([
                    .init(header: "LANGUAGE"), .init(header: "TITLE", maxWidth: 50),
                    .init(header: "TAGLINE", maxWidth: 60),
                ])
                for localized in movie.localized {
                    titles.append([localized.language, localized.title ?? "–", localized.tagline ?? ""])
                }
                lines += ["", titles.render()]
            }
            if !movie.reviews.isEmpty {
                var reviews = TextTable([
                    .init(header: "REVIEW BY", maxWidth: 24), .init(header: "RATING", alignment: .right),
                    .init(header: "WRITTEN"), .init(header: "EXCERPT", maxWidth: 70),
                ])
                for review in movie.reviews {
                    reviews.append([
                        review.author ?? "–", Format.decimal(review.rating, digits: 1),
                        review.createdAt.map { String($0.prefix(10)) } ?? "–", review.excerpt ?? "",
                    ])
                }
                lines += ["", reviews.render()]
            }
            if !movie.images.isEmpty {
                lines += ["", Format.images(movie.images)]
            }
            if !movie.koficLinks.isEmpty {
                var links = TextTable([
                    .init(header: "KOFIC"), .init(header: "KOREAN TITLE"), .init(header: "OPENED"),
                    .init(header: "LINKED BY"),
                ])
                for link in movie.koficLinks {
                    links.append([link.movieCd, link.title ?? "–", link.openDate ?? "–", link.method])
                }
                lines += ["", links.render()]
            }
            lines += [
                "",
                "movie \(movie.movieID): "
                    + [
                        Format.count(movie.localized.count, "language"), Format.count(movie.genres.count, "genre"),
                        Format.count(movie.reviews.count, "review"), Format.count(movie.images.count, "image"),
                        Format.count(movie.koficLinks.count, "KOFIC link"),
                    ].joined(separator: ", ") + (movie.facts == nil ? "; details not fetched yet" : ""),
            ]
            return lines.joined(separator: "\n")
        }
    }

    struct BoxOffice: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "box-office",
            abstract: "Show a KOFIC box-office list, with the TMDB movie linked to each entry.",
            discussion: """
                Without --date or --week: the latest list of that kind in the store (the header says which). \
                --date picks the day (daily) or the week containing it (weekly lists); --week picks a weekly list \
                by KOFIC's week number.

                Examples:
                  marquee query box-office
                  marquee query box-office --date 2023-04-26
                  marquee query box-office --weekend --date 2024-01-13
                  marquee query box-office --weekly --week 202401 --json
                """
        )

        enum Period: String, EnumerableFlag {
            case daily, weekly, weekend, weekdays

            var storePeriod: BoxOfficePeriod {
                switch self {
                case .daily: .daily
                case .weekly: .week
                case .weekend: .weekend
                case .weekdays: .weekdays
                }
            }

            static func help(for value: Period) -> ArgumentHelp? {
                switch value {
                case .daily: "One day's list."
                case .weekly: "The whole week's list (Monday–Sunday)."
                case .weekend: "The weekend's list (Friday–Sunday)."
                case .weekdays: "The weekdays' list (Monday–Thursday)."
                }
            }
        }

        @OptionGroup var options: QueryOptions

        @Flag var period: Period = .daily

        @Option(help: ArgumentHelp("A day, YYYY-MM-DD (or YYYYMMDD).", valueName: "day"))
        var date: String?

        @Option(help: ArgumentHelp("A weekly list by KOFIC's week number, YYYYWW.", valueName: "yyyyww"))
        var week: String?

        @Option(help: "Show the linked TMDB titles in this language (ko-KR, or ko). Default: any.")
        var language: String?

        /// `--date` as `YYYY-MM-DD`.
        var day: String? {
            guard let date else { return nil }
            let digits = date.filter(\.isNumber)
            guard date.count == 8, digits.count == 8 else { return date }
            return "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
        }

        func validate() throws {
            if self.date != nil, self.week != nil { throw ValidationError("give --date or --week, not both") }
            if self.week != nil, self.period == .daily {
                throw ValidationError("--week picks a weekly list: add --weekly, --weekend or --weekdays")
            }
            if let day = self.day, !Format.isDay(day) {
                throw ValidationError("--date '\(self.date ?? "")' is not a day: use YYYY-MM-DD")
            }
            if let week = self.week {
                guard week.count == 6, week.allSatisfy(\.isASCII), week.allSatisfy(\.isNumber),
                    let number = Int(week.suffix(2)), (1...53).contains(number)
                else { throw ValidationError("--week '\(week)' is not a week: use YYYYWW, e.g. 202401") }
            }
        }

        func run() async throws {
            let (options, period, day, week, language) = (self.options, self.period, self.day, self.week, self.language)
            try await options.withStore { store in
                let chart: BoxOfficeChart?
                if let week {
                    chart = try await store.boxOffice(period: period.storePeriod, yearWeek: week, language: language)
                } else {
                    chart = try await store.boxOffice(period: period.storePeriod, date: day, language: language)
                }
                if options.json { return try options.printJSON(chart) }
                guard let chart else {
                    let what = week.map { "week \($0)" } ?? day.map { "\($0)" } ?? "any day"
                    return options.nothingFound("no \(period.rawValue) box office for \(what) in \(store.location)")
                }
                print(Self.heading(chart, latest: day == nil && week == nil))
                var table = TextTable([
                    .init(header: "RANK", alignment: .right), .init(header: "CHANGE", alignment: .right),
                    .init(header: "MOVIE", maxWidth: 30), .init(header: "OPENED"),
                    .init(header: "AUDIENCE", alignment: .right), .init(header: "TOTAL", alignment: .right),
                    .init(header: "SALES (KRW)", alignment: .right), .init(header: "SHARE", alignment: .right),
                    .init(header: "SCREENS", alignment: .right), .init(header: "SHOWS", alignment: .right),
                    .init(header: "TMDB", maxWidth: 36),
                ])
                for entry in chart.entries {
                    let change: String =
                        if entry.isNew == true { "new" } else if let change = entry.rankChange, change != 0 {
                            change > 0 ? "+\(change)" : "\(change)"
                        } else { "–" }
                    table.append([
                        "\(entry.rank)", change, entry.movieName ?? entry.movieCd ?? "–", entry.openDate ?? "–",
                        Format.grouped(entry.audienceCount), Format.grouped(entry.audienceAccumulated),
                        Format.grouped(entry.salesAmount),
                        entry.salesShare.map { Format.decimal($0, digits: 1) + "%" } ?? "–",
                        Format.grouped(entry.screenCount), Format.grouped(entry.showCount),
                        entry.tmdbMovieID.map { id in "\(id)" + (entry.tmdbTitle.map { " \($0)" } ?? "") } ?? "",
                    ])
                }
                print(table.render())
                let linked = chart.entries.filter { $0.tmdbMovieID != nil }.count
                print(
                    "\(Format.count(chart.entries.count, "entry", plural: "entries")), \(linked) linked to a TMDB movie"
                )
            }
        }

        static func heading(_ chart: BoxOfficeChart, latest: Bool) -> String {
            let range: String
            switch (chart.showRangeStart, chart.showRangeEnd) {
            case (let start?, let end?) where start == end: range = start
            case (let start?, let end?): range = "\(start) – \(end)"
            default: range = chart.periodKey
            }
            let name: String
            switch chart.period {
            case .daily: name = "Daily box office for \(range)"
            case .week: name = "Weekly box office for \(range) (week \(chart.periodKey))"
            case .weekend: name = "Weekend box office for \(range) (week \(chart.periodKey))"
            case .weekdays: name = "Weekdays box office for \(range) (week \(chart.periodKey))"
            }
            return name + (latest ? ", the latest in the store" : "")
        }
    }

    struct Books: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find Open Library books by part of the title and/or an author's name.",
            discussion: """
                Compared folded like movie titles. Most editions first; the cover column says whether the \
                image worker stored the cover.

                Examples:
                  marquee query books --title "lord of the rings"
                  marquee query books --author tolkien --limit 50
                  marquee query books --title apple --author hood --json
                """
        )

        @OptionGroup var options: QueryOptions

        @Option(help: "Part of the title.")
        var title: String?

        @Option(help: "Part of an author's name.")
        var author: String?

        @Option(help: "At most this many books (1–\(Store.maximumLimit)).")
        var limit = 20

        func validate() throws {
            guard self.title != nil || self.author != nil else {
                throw ValidationError("give --title, --author or both")
            }
            if let title = self.title { try validateSearch(title, name: "--title") }
            if let author = self.author { try validateSearch(author, name: "--author") }
            try validateLimit(self.limit)
        }

        func run() async throws {
            let (options, title, author, limit) = (self.options, self.title, self.author, self.limit)
            let criteria = [title.map { "'\($0)' in the title" }, author.map { "'\($0)' in an author's name" }]
                .compactMap { $0 }.joined(separator: " and ")
            try await options.withStore { store in
                let books = try await store.books(titleContaining: title, author: author, limit: limit)
                if options.json { return try options.printJSON(books) }
                guard !books.isEmpty else {
                    return options.nothingFound("no book with \(criteria) in \(store.location)")
                }
                var table = TextTable([
                    .init(header: "TITLE", maxWidth: 50), .init(header: "AUTHORS", maxWidth: 36),
                    .init(header: "FIRST", alignment: .right), .init(header: "EDITIONS", alignment: .right),
                    .init(header: "COVER"), .init(header: "KEY"),
                ])
                for book in books {
                    let cover =
                        book.cover.map { "stored, \(Format.count($0.variants.count, "variant"))" }
                        ?? book.coverID.map { "id \($0)" } ?? "–"
                    table.append([
                        book.title ?? "–", book.authors.compactMap(\.name).joined(separator: ", "),
                        book.firstPublishYear.map { "\($0)" } ?? "–", Format.grouped(book.editionCount), cover,
                        book.bookKey,
                    ])
                }
                print(table.render())
                let more = books.count == limit ? " (the first \(limit): --limit shows more)" : ""
                print("\(Format.count(books.count, "book")) with \(criteria), most editions first\(more)")
            }
        }
    }

    struct Counts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count the rows of the catalogue's main tables.",
            discussion: """
                Examples:
                  marquee query counts
                  marquee query counts --json
                """
        )

        @OptionGroup var options: QueryOptions

        func run() async throws {
            let options = self.options
            try await options.withStore { store in
                let counts = try await store.counts()
                if options.json { return try options.printJSON(counts) }
                var table = TextTable([.init(header: "TABLE"), .init(header: "ROWS", alignment: .right)])
                for (name, count) in counts.all {
                    table.append([name, Format.grouped(count)])
                }
                print(table.render())
                let version = try await store.schemaVersion().map { "schema version \($0)" } ?? "no schema"
                print("\(store.location), \(version)")
            }
        }
    }
}

// MARK: - Validation and formatting

private func validateSearch(_ text: String, name: String) throws {
    // The store folds the text the same way and would refuse it: say so as a usage error.
    guard TitleMatching.fold(text) != nil else {
        throw ValidationError("\(name) '\(text)' has no letter or digit to search for")
    }
}

private func validateLimit(_ limit: Int) throws {
    guard (1...Store.maximumLimit).contains(limit) else {
        throw ValidationError("--limit must be from 1 to \(Store.maximumLimit)")
    }
}

/// How values are written in tables.
enum Format {
    /// `0:42`, `12:03`, `1:02:03`.
    static func elapsed(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return seconds >= 3600
            ? "\(seconds / 3600):\(two(seconds / 60 % 60)):\(two(seconds % 60))" : "\(seconds / 60):\(two(seconds % 60))"
    }

    /// `1,234,567`; `–` for none.
    static func grouped(_ value: Int?) -> String {
        guard let value else { return "–" }
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// A number with `digits` decimals; `–` for none.
    static func decimal(_ value: Double?, digits: Int) -> String {
        guard let value, value.isFinite else { return "–" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var text = (value < 0 && scaled != 0 ? "-" : "") + grouped(whole)
        if digits > 0 {
            let fractionText = String(fraction)
            text += "." + String(repeating: "0", count: max(0, digits - fractionText.count)) + fractionText
        }
        return text
    }

    /// `1 movie`, `3 movies`.
    static func count(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
    }

    /// `YYYY-MM-DD` and a real calendar day.
    static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), year >= 1,
            (1...12).contains(month), day >= 1
        else { return false }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return day <= [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// The images table of a movie: role, original, variants, colour.
    static func images(_ images: [StoredImage]) -> String {
        var table = TextTable([
            .init(header: "IMAGE"), .init(header: "ORIGINAL"), .init(header: "VARIANTS", maxWidth: 80),
            .init(header: "COLOUR"), .init(header: "SHA-256", maxWidth: 14),
        ])
        for image in images {
            table.append([
                image.role, "\(image.width)×\(image.height) \(image.format) \(self.bytes(image.bytes))",
                image.variants.map { "\($0.width)w \($0.format) \(self.bytes($0.bytes))" }.joined(separator: ", "),
                image.dominantColor ?? "–", image.sha256,
            ])
        }
        return table.render()
    }

    /// `812 B`, `34 KB`, `1.2 MB`.
    static func bytes(_ count: Int) -> String {
        if count < 1000 { return "\(count) B" }
        if count < 1_000_000 { return "\(count / 1000) KB" }
        return self.decimal(Double(count) / 1_000_000, digits: 1) + " MB"
    }
}
