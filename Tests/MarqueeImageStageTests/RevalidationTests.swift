import MarqueeHTTP
import MarqueeImaging
import Testing

@testable import MarqueeImageStage

/// When the image stage sends validators, and what a `304` or a `200` leaves behind.
@Suite
struct RevalidationTests {
    static let hash = String(repeating: "c", count: 64)

    static func outcome(_ sha256: String = Self.hash) -> ImageOutcome {
        ImageOutcome(
            sha256: sha256,
            original: ImageProbe(format: .jpeg, width: 500, height: 750, bytes: 1_000, hasAlpha: false, orientation: 1),
            variants: [],
            placeholder: ImagePlaceholder(dominantColor: "#000000", blurHash: "L00000fQfQfQfQfQfQfQfQfQfQfQ")
        )
    }

    @Test func validatorsOfAStoredImageAreSent() throws {
        let kept = HTTPValidators(etag: "\"v1\"", lastModified: "Tue, 01 Oct 2024 00:00:00 GMT", content: Self.hash)
        #expect(Revalidation.storedHash(of: kept) == Self.hash)
        let plan = Revalidation.plan(validators: kept, stored: Self.outcome())
        #expect(plan == .conditional(kept, stored: Self.outcome()))
        #expect(
            plan.headers.map { "\($0.name): \($0.value)" } == [
                "If-None-Match: \"v1\"", "If-Modified-Since: Tue, 01 Oct 2024 00:00:00 GMT",
            ]
        )
        #expect(plan.notModified == Self.outcome(), "a 304 keeps the stored image")
    }

    @Test func withoutAStoredImageTheDownloadIsFull() {
        let kept = HTTPValidators(etag: "\"v1\"", content: Self.hash)
        #expect(Revalidation.plan(validators: nil, stored: Self.outcome()) == .full, "nothing kept for the URL")
        #expect(Revalidation.plan(validators: kept, stored: nil) == .full, "the image is gone from the image store")
        let other = Self.outcome(String(repeating: "d", count: 64))
        #expect(Revalidation.plan(validators: kept, stored: other) == .full, "a manifest of another image")
        let anonymous = HTTPValidators(etag: "\"v1\"")
        #expect(Revalidation.storedHash(of: anonymous) == nil, "validators that name no image")
        #expect(Revalidation.plan(validators: anonymous, stored: Self.outcome()) == .full)
        #expect(Revalidation.storedHash(of: HTTPValidators(content: Self.hash)) == nil, "no validator to send")
        #expect(Revalidation.storedHash(of: HTTPValidators(etag: "\"v\"", content: "../../etc")) == nil, "not a hash")
        #expect(Revalidation.full.headers.isEmpty)
        #expect(Revalidation.full.notModified == nil, "a 304 to a full download is an error")
    }

    @Test func aNewImageKeepsTheResponsesValidatorsWithItsHash() {
        let response = HTTPValidators(etag: "\"v2\"", lastModified: "Wed, 02 Oct 2024 00:00:00 GMT")
        #expect(
            Revalidation.kept(response, sha256: Self.hash)
                == HTTPValidators(etag: "\"v2\"", lastModified: "Wed, 02 Oct 2024 00:00:00 GMT", content: Self.hash)
        )
        #expect(Revalidation.kept(nil, sha256: Self.hash) == nil, "nothing to revalidate with")
    }
}
