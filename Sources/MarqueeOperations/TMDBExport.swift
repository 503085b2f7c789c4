public import MarqueeCore
import MarqueeJSON

/// TMDB's daily export of every movie id: its file names, its dates and its lines.
///
/// TMDB publishes `movie_ids_MM_DD_YYYY.json.gz` each day, around 08:00 UTC, under
/// `http://files.tmdb.org/p/exports`: gzip, one JSON object a line, such as
/// `{"adult":false,"id":3924,"original_title":"Blondie","popularity":2.9,"video":false}`. The lines are in no
/// promised order.
public enum TMDBExport {
    /// The default base URL of the exports (`TMDB_EXPORT_BASE_URL`).
    public static let defaultBaseURL = "http://files.tmdb.org/p/exports"

    /// The hour (UTC) from which today's export is expected; before it, yesterday's is the latest.
    public static let publishHour = 8

    /// `movie_ids_MM_DD_YYYY.json.gz`.
    public static func fileName(_ day: LocalDate) -> String {
        let (year, month, dayOfMonth) = day.components
        return
            "movie_ids_\(LocalDate.padded(month, 2))_\(LocalDate.padded(dayOfMonth, 2))_\(LocalDate.padded(year, 4)).json.gz"
    }

    /// The UTC day of `epochSeconds`.
    public static func day(epochSeconds: Int64) -> LocalDate {
        LocalDate(dayNumber: epochSeconds.floorDivided(by: 86_400))
    }

    /// The days whose export is the latest at `epochSeconds`, to try in order: from 08:00 UTC today's, then
    /// yesterday's (today's may be late); before 08:00, yesterday's, then the day before's.
    public static func latestDays(epochSeconds: Int64) -> [LocalDate] {
        let hour = Int((epochSeconds % 86400 + 86400) % 86400 / 3600)
        let start = hour >= Self.publishHour ? epochSeconds : epochSeconds - 86400
        return [Self.day(epochSeconds: start), Self.day(epochSeconds: start - 86400)]
    }

    /// The URL of the export of `day` under `baseURL`.
    public static func url(baseURL: String, day: LocalDate) -> String {
        (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL) + "/" + Self.fileName(day)
    }
}

/// One movie of a TMDB export line.
public struct TMDBExportEntry: Sendable, Hashable {
    /// The TMDB movie id.
    public var id: Int64
    /// TMDB's popularity at the export's time (0 when the line has none).
    public var popularity: Double
    /// Whether the movie is marked adult.
    public var isAdult: Bool

    public init(id: Int64, popularity: Double, isAdult: Bool) {
        self.id = id
        self.popularity = popularity
        self.isAdult = isAdult
    }

    /// The movie of one line, or why the line is not one.
    ///
    /// A line is a JSON object with a positive integer `id`; `popularity` (a number) and `adult` (a boolean)
    /// are read when present; other members (`original_title`, `video`) are not needed and not checked.
    public static func parse(_ line: [UInt8]) -> Result<TMDBExportEntry, OperationsError> {
        func bad(_ reason: String) -> Result<TMDBExportEntry, OperationsError> {
            .failure(OperationsError(.enqueue, reason))
        }
        guard let document = JSONDocument(line) else { return bad("not a JSON value") }
        let root = document.root
        guard root.kind == .object else { return bad("not a JSON object") }
        guard let idValue = root[member: "id"] else { return bad("no \"id\"") }
        guard case .integer(let id)? = idValue.scalar, id > 0 else {
            return bad("\"id\" is not a positive integer")
        }
        var popularity = 0.0
        if let value = root[member: "popularity"] {
            switch value.scalar {
            case .integer(let number)?: popularity = Double(number)
            case .number(let number)?: popularity = number
            case .null?: break
            default: return bad("\"popularity\" is not a number")
            }
        }
        var isAdult = false
        if let value = root[member: "adult"] {
            switch value.scalar {
            case .bool(let flag)?: isAdult = flag
            case .null?: break
            default: return bad("\"adult\" is not a boolean")
            }
        }
        return .success(TMDBExportEntry(id: id, popularity: popularity, isAdult: isAdult))
    }
}

/// Which movies of an export become jobs.
public struct TMDBExportFilter: Sendable, Hashable {
    /// Movies less popular than this are skipped; `nil` keeps every one.
    public var minPopularity: Double?
    /// Whether movies marked adult are kept. Default: `false`.
    public var includesAdult: Bool

    public init(minPopularity: Double? = nil, includesAdult: Bool = false) {
        self.minPopularity = minPopularity
        self.includesAdult = includesAdult
    }

    /// Whether `entry` becomes jobs.
    public func admits(_ entry: TMDBExportEntry) -> Bool {
        if entry.isAdult && !self.includesAdult { return false }
        if let minimum = self.minPopularity, entry.popularity < minimum { return false }
        return true
    }
}
