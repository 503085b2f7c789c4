import MarqueeCore
import MarqueeImageStore
import MarqueeJSON
import MarqueeStore
import MarqueeTestSupport
import Testing

import class Foundation.FileManager

/// `marquee images gc`: the built command over an SQLite store and a `file://` image store.
@Suite(.serialized, .timeLimit(.minutes(2)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImagesCLITests {
    static func image(_ owner: String, sha256: String, at fetchedAt: Int64) -> Record {
        TestRecords.poster(
            owner: owner,
            sha256: sha256,
            variantKey: ImageKey.variant(sha256: sha256, width: 92, format: "webp").rawValue,
            fetchedAt: fetchedAt
        )
    }

    @Test func gcRemovesOnlyTheReplacedImage() async throws {
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-gc")).db"
        let folder = "/tmp/\(TestEnvironment.uniqueName("marquee-gc-images"))"
        defer {
            removeSQLiteFiles(path)
            try? FileManager.default.removeItem(atPath: folder)
        }
        let old = ContentHash.sha256Hex([1, 2, 3])
        let new = ContentHash.sha256Hex([4, 5, 6])
        let images = try ImageStores.make(
            location: "file://" + folder,
            environment: [:],
            fetcher: nil,
            logger: .marqueeTest
        )
        for hash in [old, new] {
            try await images.put(
                ImageKey.variant(sha256: hash, width: 92, format: "webp"),
                [7],
                contentType: "image/webp"
            )
            try await images.put(ImageKey.manifest(sha256: hash), [8], contentType: "application/json")
        }
        let store = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: .marqueeTest)
        _ = try await store.migrate()
        _ = try await store.write([Self.image("tmdb:movie:1", sha256: old, at: 1_000)])
        _ = try await store.write([Self.image("tmdb:movie:1", sha256: new, at: 2_000)])
        await store.close()
        let flags = ["--store", "sqlite:\(path)", "--image-store", "file://" + folder]

        let dry = try await runMarquee(["images", "gc", "--dry-run", "--json"] + flags)
        #expect(dry.status == 0, "\(dry.standardError)")
        guard case .object(let listed) = try JSONValue.parse(Array(dry.standardOutput.utf8)) else {
            Issue.record("not a JSON object: \(dry.standardOutput)")
            return
        }
        #expect(listed["removed"] == .array([.string(old)]))
        #expect(listed["revived"] == .array([]))
        #expect(listed["dry_run"] == .bool(true))
        #expect(try await images.exists(ImageKey.manifest(sha256: old)), "a dry run removes nothing")

        let run = try await runMarquee(["images", "gc"] + flags)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("removed 1 images") && run.standardOutput.contains(old))
        #expect(try await images.exists(ImageKey.manifest(sha256: old)) == false)
        #expect(try await images.exists(ImageKey.variant(sha256: old, width: 92, format: "webp")) == false)
        #expect(try await images.exists(ImageKey.manifest(sha256: new)), "the image the movie shows stays")

        let again = try await runMarquee(["images", "gc"] + flags)
        #expect(again.standardOutput.contains("removed 0 images"))

        let bad = try await runMarquee(["images", "gc", "--store", "sqlite:\(path)", "--image-store", "ftp://x"])
        #expect(bad.status != 0)
        #expect(bad.standardError.contains("--image-store"), "\(bad.standardError)")
    }
}
