import ArgumentParser
import Logging
import MarqueeCore
import MarqueeOperations
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import class Foundation.FileManager
import class Foundation.JSONEncoder

/// `marquee query`: reads the catalogue store (docs/query.md). It never writes: no migration, no file created.
struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the catalogue: movies, a movie's details, box office, books, account ratings, row counts.",
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
              marquee query ratings --account default
              marquee query counts --store postgres://marquee@127.0.0.1:15432/marquee
            """,
        subcommands: [Movies.self, Movie.self, BoxOffice.self, Books.self, Ratings.self, Counts.self]
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
                        throw Failure(
                            "the store at \(location) is empty: run marquee-index (or make run) first",
                            status: .noInput
                        )
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
                    throw Failure(
                        "the store at \(location) did not answer within \(timeout) s (\(hint))",
                        status: .unavailable
                    )
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
                print(MovieSummary.text(movies, title: title, limit: limit))
            }
        }
    }

    struct Movie: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show everything stored about one TMDB movie.",
            discussion: """
                Facts, when the movie was last refreshed and why (list, search, backfill, change, schedule or \
                request), titles and taglines per language, genres, reviews (the first 300 characters), stored \
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
                print(movie.text)
            }
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
        var day: String? { self.date.map(CatalogueQuery.day) }

        func validate() throws {
            if self.date != nil, self.week != nil { throw ValidationError("give --date or --week, not both") }
            if self.week != nil, self.period == .daily {
                throw ValidationError("--week picks a weekly list: add --weekly, --weekend or --weekdays")
            }
            if let day = self.day, !CatalogueQuery.isDay(day) {
                throw ValidationError("--date '\(self.date ?? "")' is not a day: use YYYY-MM-DD")
            }
            if let week = self.week, !CatalogueQuery.isWeek(week) {
                throw ValidationError("--week '\(week)' is not a week: use YYYYWW, e.g. 202401")
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
                print(chart.text(latest: day == nil && week == nil))
            }
        }
    }

    struct Ratings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a signed-in TMDB account's rated movies (with the ratings), favourites or watchlist.",
            discussion: """
                The account is named by its label, as the fetch workers' settings name it (TMDB_ACCOUNT, default \
                "default"; or TMDB_SESSIONS, TMDB_ACCESS_TOKENS). Rated movies come latest rating first, the other lists by title.

                Examples:
                  marquee query ratings --account default
                  marquee query ratings --account family --list watchlist --json
                """
        )

        enum List: String, ExpressibleByArgument, CaseIterable {
            case rated, favorite, watchlist
        }

        @OptionGroup var options: QueryOptions

        @Option(help: ArgumentHelp("The account's label.", valueName: "label"))
        var account = "default"

        @Option(help: "Which list: rated, favorite or watchlist.")
        var list: List = .rated

        @Option(help: "The most movies shown (1…500).")
        var limit = 100

        func validate() throws {
            guard FetchJob.isTMDBAccountLabel(self.account) else {
                throw ValidationError(
                    "--account '\(self.account.prefix(80))' is not an account label (a-z, 0-9, '.', '_', '-')"
                )
            }
            guard (1...500).contains(self.limit) else { throw ValidationError("--limit must be from 1 to 500") }
        }

        func run() async throws {
            let (options, account, list, limit) = (self.options, self.account, self.list, self.limit)
            try await options.withStore { store in
                let movies = try await store.accountMovies(
                    account: account,
                    list: FetchJob.TMDBAccountList(rawValue: list.rawValue)!,
                    limit: limit
                )
                if options.json { return try options.printJSON(movies) }
                guard let movies else {
                    return options.nothingFound("no TMDB account '\(account)' in \(store.location)")
                }
                print(movies.text)
            }
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
            let criteria = BookSummary.criteria(title: title, author: author)
            try await options.withStore { store in
                let books = try await store.books(titleContaining: title, author: author, limit: limit)
                if options.json { return try options.printJSON(books) }
                guard !books.isEmpty else {
                    return options.nothingFound("no book with \(criteria) in \(store.location)")
                }
                print(BookSummary.text(books, criteria: criteria, limit: limit))
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
                print(counts.text(location: store.location, schemaVersion: try await store.schemaVersion()))
            }
        }
    }
}

// MARK: - Validation

private func validateSearch(_ text: String, name: String) throws {
    // The store folds the text the same way and would refuse it: say so as a usage error.
    guard CatalogueQuery.isSearchable(text) else {
        throw ValidationError("\(name) '\(text)' has no letter or digit to search for")
    }
}

private func validateLimit(_ limit: Int) throws {
    guard CatalogueQuery.isLimit(limit) else {
        throw ValidationError("--limit must be from 1 to \(Store.maximumLimit)")
    }
}
