import MarqueeImageStage
import MarqueeLimits
import Testing

@Suite struct ImageLimitsTests {
    @Test func ratesAreReadPerHostAndZeroMeansNone() throws {
        let limits = try ImageLimits.parse("image.tmdb.org=20, Covers.OpenLibrary.org = 5,search1.kakaocdn.net=0")
        #expect(limits.map(\.host) == ["image.tmdb.org", "covers.openlibrary.org"])
        #expect(limits.map(\.rate) == [20, 5])
        #expect(try ImageLimits.parse("").isEmpty)
        let ids = ImageLimits.sourceLimits(limits).map { "\($0.source)/\($0.host)/\($0.rate ?? 0)" }
        #expect(ids == ["image.tmdb.org/image.tmdb.org/20.0", "covers.openlibrary.org/covers.openlibrary.org/5.0"])
    }

    @Test(arguments: [
        "image.tmdb.org", "image.tmdb.org=fast", "=3", "https://image.tmdb.org=3", "image.tmdb.org:443=3",
        "image.tmdb.org=-1",
    ])
    func aMalformedRateIsRefusedWithTheExpectedForm(text: String) {
        do {
            _ = try ImageLimits.parse(text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.description.contains("host=rate"))
        }
    }

    @Test func aURLsHostIsItsLimitsName() {
        #expect(ImageLimits.host(ofURL: "https://image.tmdb.org/t/p/w500/x.jpg") == "image.tmdb.org")
        #expect(ImageLimits.host(ofURL: "http://127.0.0.1:8181/tmdb-images/t/p/w500/x.jpg") == "127.0.0.1")
        #expect(ImageLimits.host(ofURL: "https://COVERS.openlibrary.org/b/id/1-L.jpg") == "covers.openlibrary.org")
        #expect(ImageLimits.host(ofURL: "http://[::1]:81/x.png") == "[::1]")
    }
}
