import MarqueeCore
import MarqueeJSON
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// The store's side of image revalidation and of the garbage collection of replaced images: validators that name
/// an image, the images no entity points to, and their removal.
@Suite("Store image validators and collection")
struct ImageCollectionStoreTests {
    static let old = String(repeating: "a", count: 64)
    static let new = String(repeating: "b", count: 64)

    static func image(_ owner: String, sha256: String, at fetchedAt: Int64) -> Record {
        TestRecords.poster(owner: owner, sha256: sha256, variantKey: "\(sha256)/92.webp", fetchedAt: fetchedAt)
    }

    @Test("validators keep the image they validate; API validators keep none", arguments: TestEngine.enabled)
    func validatorsKeepTheirContent(engine: TestEngine) async throws {
        try await engine.withStore { store in
            try await store.storeValidators(etag: "\"e1\"", lastModified: nil, content: Self.old, for: "http://i/p.jpg")
            try await store.storeValidators(
                etag: "\"api\"",
                lastModified: "Tue, 01 Oct 2024 00:00:00 GMT",
                for: "http://a/1"
            )
            let image = try #require(try await store.validators(for: "http://i/p.jpg"))
            #expect(image.etag == "\"e1\"" && image.content == Self.old)
            let api = try #require(try await store.validators(for: "http://a/1"))
            #expect(api.content == nil && api.lastModified == "Tue, 01 Oct 2024 00:00:00 GMT")
            // A changed image replaces both the validators and the image they name.
            try await store.storeValidators(etag: "\"e2\"", lastModified: nil, content: Self.new, for: "http://i/p.jpg")
            #expect(try await store.validators(for: "http://i/p.jpg")?.content == Self.new)
        }
    }

    @Test(
        "an image is collected only once nothing points to it and the grace has passed",
        arguments: TestEngine.enabled
    )
    func unreferencedImagesAreFoundAndRemoved(engine: TestEngine) async throws {
        try await engine.withStore { store in
            // Two movies share the old poster; one of them gets a new one.
            _ = try await store.write([
                Self.image("tmdb:movie:1", sha256: Self.old, at: 1_000),
                Self.image("tmdb:movie:2", sha256: Self.old, at: 1_000),
            ])
            _ = try await store.write([Self.image("tmdb:movie:1", sha256: Self.new, at: 2_000)])
            #expect(try await store.unreferencedImages(recordedBefore: 10_000, limit: 10).isEmpty, "movie 2 keeps it")

            _ = try await store.write([Self.image("tmdb:movie:2", sha256: Self.new, at: 3_000)])
            #expect(try await store.unreferencedImages(recordedBefore: 1_000, limit: 10).isEmpty, "within the grace")
            let found = try await store.unreferencedImages(recordedBefore: 10_000, limit: 10)
            #expect(found.map(\.sha256) == [Self.old])
            #expect(found.first?.variantKeys == ["\(Self.old)/92.webp"])

            try await store.storeValidators(
                etag: "\"e1\"",
                lastModified: nil,
                content: Self.old,
                for: "http://i/old.jpg"
            )
            try await store.storeValidators(
                etag: "\"e2\"",
                lastModified: nil,
                content: Self.new,
                for: "http://i/new.jpg"
            )
            try await store.forgetValidators(content: Self.old)
            #expect(try await store.validators(for: "http://i/old.jpg") == nil)
            #expect(try await store.validators(for: "http://i/new.jpg")?.content == Self.new)

            #expect(try await store.removeImage(Self.old))
            #expect(try await store.removeImage(Self.old) == false, "already gone")
            #expect(try await store.removeImage(Self.new) == false, "both movies point to it")
            let left = try await store.engine.read("SELECT sha256 FROM images ORDER BY sha256", []).map { $0[0].text }
            #expect(left == [Self.new])
            let variants = try await store.engine.read("SELECT DISTINCT sha256 FROM image_variants", []).map {
                $0[0].text
            }
            #expect(variants == [Self.new])
        }
    }
}
