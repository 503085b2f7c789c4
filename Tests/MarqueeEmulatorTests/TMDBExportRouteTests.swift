import MarqueeEmulator
import MarqueeGzip
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization

/// The files host's daily id export: gzip, a line per movie of the catalogue in TMDB's shape, every id one that
/// `movie/{id}` answers.
@Suite(.timeLimit(.minutes(2)))
struct TMDBExportRouteTests {
    static func lines(_ body: [UInt8]) throws -> [[String: Any]] {
        let decoder = try GzipDecoder()
        var text: [UInt8] = []
        try decoder.decode(body, into: &text)
        try decoder.finish()
        #expect(text.last == UInt8(ascii: "\n"))
        return try text.split(separator: UInt8(ascii: "\n")).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
        }
    }

    @Test func theExportHoldsEveryMovieOnceInTMDBsLineShape() async throws {
        try await Harness.with(movies: 300) { harness in
            let reply = try await harness.get("/tmdb-files/p/exports/movie_ids_03_07_2025.json.gz")
            #expect(reply.status == 200)
            #expect(reply.header("content-type") == "application/gzip")
            let lines = try Self.lines(reply.body)
            #expect(lines.count == 300)
            // The documented line: {"adult":false,"id":3924,"original_title":"Blondie","popularity":2.9,"video":false}
            for line in lines {
                #expect(Set(line.keys) == ["adult", "id", "original_title", "popularity", "video"])
                #expect(line["id"] is Int && line["original_title"] is String && line["popularity"] is Double)
                #expect(line["adult"] is Bool && line["video"] as? Bool == false)
            }
            let ids = lines.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted() && Set(ids).count == 300)
            #expect(lines.contains { $0["adult"] as? Bool == true }, "adult movies are listed, as TMDB lists them")
            // Every id is a movie the API answers.
            for id in ids.prefix(20) + ids.suffix(20) {
                let details = try await harness.get("/tmdb/3/movie/\(id)?api_key=\(Harness.key)")
                #expect(details.status == 200, "movie \(id)")
            }
            // Every day's export is the same catalogue.
            let other = try await harness.get("/tmdb-files/p/exports/movie_ids_12_31_2024.json.gz")
            #expect(other.body == reply.body)
        }
    }

    @Test func namesThatAreNotAPublishedExportAre404() async throws {
        try await Harness.with(movies: 20) { harness in
            for path in [
                "/tmdb-files/p/exports/movie_ids_02_30_2025.json.gz",  // no such day
                "/tmdb-files/p/exports/movie_ids_01_01_2999.json.gz",  // not published yet
                "/tmdb-files/p/exports/tv_series_ids_03_07_2025.json.gz",
                "/tmdb-files/p/exports/movie_ids_3_7_2025.json.gz",
                "/tmdb-files/p/movie_ids_03_07_2025.json.gz",
            ] {
                let reply = try await harness.get(path)
                #expect(reply.status == 404, "\(path)")
            }
        }
    }

    @Test func aLargerCatalogueIsServedWhole() async throws {
        try await Harness.with(movies: 2000, books: 10) { harness in
            let reply = try await harness.get("/tmdb-files/p/exports/movie_ids_03_07_2025.json.gz")
            #expect(reply.status == 200)
            let decoder = try GzipDecoder()
            var text: [UInt8] = []
            try decoder.decode(reply.body, into: &text)
            try decoder.finish()
            #expect(text.count(where: { $0 == UInt8(ascii: "\n") }) == 2000)
        }
    }
}
