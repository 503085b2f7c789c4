import MarqueeGzip
import Synchronization

import func Foundation.time

/// TMDB's daily id export (`files.tmdb.org/p/exports/movie_ids_MM_DD_YYYY.json.gz`) of the emulator's own
/// catalogue: every movie, adult ones included as TMDB's has them, one JSON line each, in id order, gzip.
///
/// Every id in it is a movie `movie/{id}` answers. The catalogue is the same whatever the date, so every date's
/// export holds the same lines; a date after today (UTC, by the wall clock) is not published yet (404), as is
/// a name that is not an export's. The body is built on first request and kept.
final class TMDBExportFile: Sendable {
    let catalogue: Catalogue
    private let body = Mutex<[UInt8]?>(nil)

    init(catalogue: Catalogue) {
        self.catalogue = catalogue
    }

    /// The day an export file name stands for, or `nil` for any other name.
    static func day(fileName name: String) -> Day? {
        guard name.hasPrefix("movie_ids_"), name.hasSuffix(".json.gz") else { return nil }
        let date = name.dropFirst("movie_ids_".count).dropLast(".json.gz".count).split(separator: "_")
        guard date.count == 3, date[0].count == 2, date[1].count == 2, date[2].count == 4 else { return nil }
        return Day(parsing: "\(date[2])-\(date[0])-\(date[1])")
    }

    /// The line of the movie at `index`, as TMDB writes it (members in TMDB's order).
    func line(_ index: Int) -> [UInt8] {
        let movie = self.catalogue.movie(at: index)
        let json = JSON.object([
            ("adult", .bool(movie.core.isAdult)),
            ("id", .int(movie.id)),
            ("original_title", .string(movie.originalTitle)),
            ("popularity", .double(movie.core.popularity)),
            ("video", .bool(false)),
        ])
        return json.serialized()
    }

    /// The whole export, gzip.
    func compressed() -> [UInt8] {
        self.body.withLock { body in
            if let body { return body }
            // The catalogue's indices are in id order (SparseID grows with the index).
            let encoder = try! GzipEncoder(level: 6)  // only fails when zlib cannot allocate its state
            var output: [UInt8] = []
            var lines: [UInt8] = []
            for index in 0..<self.catalogue.movieCount {
                lines += self.line(index)
                lines.append(UInt8(ascii: "\n"))
                if lines.count >= 1 << 16 {
                    encoder.encode(lines, into: &output)
                    lines.removeAll(keepingCapacity: true)
                }
            }
            encoder.encode(lines, into: &output)
            encoder.finish(into: &output)
            body = output
            return output
        }
    }

    /// `GET /p/exports/<name>`.
    func respond(_ name: String) -> EmulatorResponse {
        guard let day = Self.day(fileName: name) else { return Self.notFound(name) }
        let today = Day(Int(time(nil)) / 86400)
        guard day <= today else { return Self.notFound(name) }
        return EmulatorResponse(
            status: 200,
            contentType: "application/gzip",
            body: self.compressed(),
            kind: .other,
            lastModified: day.epochSeconds + 8 * 3600
        )
    }

    /// What the files host answers for a file it does not have.
    static func notFound(_ name: String) -> EmulatorResponse {
        .text(
            "<Error><Code>NoSuchKey</Code><Key>p/exports/\(name)</Key></Error>",
            status: 404,
            contentType: "application/xml"
        )
    }
}
