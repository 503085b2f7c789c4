import MarqueeEmulator
import Testing

import class Foundation.JSONSerialization

/// The image routes answer `ETag`/`Last-Modified`, honour `If-None-Match`/`If-Modified-Since` with a bodiless
/// `304`, count both in `/_stats`, and change an image on `POST /_control {"changeImages": …}`.
@Suite(.timeLimit(.minutes(1)))
struct ImageRevisionTests {
    /// The path of the first popular movie's poster at `size`, and the image's name for `changeImages`.
    static func poster(_ harness: Harness, size: String = "w500") async throws -> (path: String, name: String) {
        let list = try await harness.get("/tmdb/3/movie/popular?api_key=\(Harness.key)").object()
        let results = try #require(list["results"] as? [[String: Any]])
        let file = try #require(results.lazy.compactMap { $0["poster_path"] as? String }.first)
        return ("/tmdb-images/t/p/\(size)\(file)", "tmdb-images" + file)
    }

    static func images(_ stats: [String: Any], _ upstream: String) throws -> [String: Int] {
        let images = try #require(stats["images"] as? [String: Any])
        return try #require(images[upstream] as? [String: Int])
    }

    @Test func aPosterIsRevalidatedAndCounted() async throws {
        try await Harness.with { harness in
            let (path, _) = try await Self.poster(harness)
            let first = try await harness.get(path)
            #expect(first.status == 200)
            let etag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))

            let byTag = try await harness.get(path, headers: ["If-None-Match": etag])
            #expect(byTag.status == 304)
            #expect(byTag.body.isEmpty)
            let byDate = try await harness.get(path, headers: ["If-Modified-Since": lastModified])
            #expect(byDate.status == 304)
            let stale = try await harness.get(path, headers: ["If-None-Match": "\"something-else\""])
            #expect(stale.status == 200)
            #expect(stale.body == first.body)

            let counts = try Self.images(try await harness.stats(), "tmdb-images")
            #expect(counts["sent"] == 2)
            #expect(counts["bytes"] == 2 * first.body.count)
            #expect(counts["notModified"] == 2)
        }
    }

    @Test func aChangedPosterHasNewBytesAndValidators() async throws {
        try await Harness.with { harness in
            let (path, name) = try await Self.poster(harness)
            let small = try await harness.get(try await Self.poster(harness, size: "w92").path)
            let before = try await harness.get(path)
            let etag = try #require(before.header("ETag"))
            let lastModified = try #require(before.header("Last-Modified"))

            try await harness.control(["changeImages": [name]])
            let control = try await harness.get("/_control").object()
            #expect((control["changedImages"] as? [String: Int])?[name] == 1)

            let changed = try await harness.get(path, headers: ["If-None-Match": etag])
            #expect(changed.status == 200, "the old ETag no longer matches")
            #expect(changed.body != before.body)
            let newTag = try #require(changed.header("ETag"))
            #expect(newTag != etag)
            let byDate = try await harness.get(path, headers: ["If-Modified-Since": lastModified])
            #expect(byDate.status == 200, "modified after the old Last-Modified")
            #expect(try await harness.get(path, headers: ["If-None-Match": newTag]).status == 304)
            let smallAfter = try await harness.get(try await Self.poster(harness, size: "w92").path)
            #expect(smallAfter.body != small.body, "every size of the poster changes together")

            // The same change gives the same bytes (deterministic).
            #expect(try await harness.get(path).body == changed.body)
        }
    }

    @Test func aCoverChangesByItsValue() async throws {
        try await Harness.with { harness in
            let search = try await harness.get("/openlibrary/search.json?q=the&limit=50").object()
            let docs = try #require(search["docs"] as? [[String: Any]])
            let cover = try #require(docs.lazy.compactMap { $0["cover_i"] as? Int }.first)
            let before = try await harness.get("/covers/b/id/\(cover)-L.jpg")
            #expect(before.status == 200)
            try await harness.control(["changeImages": "covers/id/\(cover)"])
            let after = try await harness.get("/covers/b/id/\(cover)-L.jpg")
            #expect(after.status == 200)
            #expect(after.body != before.body)
            #expect(after.header("ETag") != before.header("ETag"))
        }
    }

    @Test func aBadChangeIsRefusedAndChangesNothing() async throws {
        try await Harness.with { harness in
            for body: [String: Any] in [
                ["changeImages": 5], ["changeImages": ["posters/x.jpg"]], ["changeImages": "tmdb-images"],
            ] {
                let reply = try await harness.get(
                    "/_control",
                    method: "POST",
                    body: Array(try JSONSerialization.data(withJSONObject: body))
                )
                #expect(reply.status == 400)
                #expect(String(decoding: reply.body, as: UTF8.self).contains("changeImages"))
            }
            let control = try await harness.get("/_control").object()
            #expect((control["changedImages"] as? [String: Int])?.isEmpty == true)
        }
    }
}
