import MarqueeImageStage
import MarqueeLimits
import Testing

@Suite struct ImageLimitsTests {
    @Test func eachHostIsALimitOfItsOwn() {
        let ids = ImageLimits.sourceLimits([("image.tmdb.org", 20), ("covers.openlibrary.org", 5)]).map {
            "\($0.source)/\($0.host)/\($0.rate ?? 0)"
        }
        #expect(ids == ["image.tmdb.org/image.tmdb.org/20.0", "covers.openlibrary.org/covers.openlibrary.org/5.0"])
    }

    @Test func aURLsHostIsItsLimitsName() {
        #expect(ImageLimits.host(ofURL: "https://image.tmdb.org/t/p/w500/x.jpg") == "image.tmdb.org")
        #expect(ImageLimits.host(ofURL: "http://127.0.0.1:8181/tmdb-images/t/p/w500/x.jpg") == "127.0.0.1")
        #expect(ImageLimits.host(ofURL: "https://COVERS.openlibrary.org/b/id/1-L.jpg") == "covers.openlibrary.org")
        #expect(ImageLimits.host(ofURL: "http://[::1]:81/x.png") == "[::1]")
    }
}
