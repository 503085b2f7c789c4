import MarqueeSettings
import Testing

/// `--rate-limits` of marquee-fetch (sources) and marquee-images (hosts).
@Suite struct RateLimitSettingTests {
    @Test func ratesAreReadPerHostLowercasedAndZeroIsKept() {
        let rates = SettingParsers.rates()("image.tmdb.org=20, Covers.OpenLibrary.org = 5,search1.kakaocdn.net=0")
        #expect(rates == ["image.tmdb.org": 20, "covers.openlibrary.org": 5, "search1.kakaocdn.net": 0])
        #expect(SettingParsers.rates()("") == [:])
    }

    @Test(arguments: [
        "image.tmdb.org", "image.tmdb.org=fast", "=3", "https://image.tmdb.org=3", "image.tmdb.org:443=3",
        "image.tmdb.org=-1", "image.tmdb.org=inf",
    ])
    func aMalformedHostRateIsRefused(text: String) {
        #expect(SettingParsers.rates()(text) == nil)
    }

    @Test func aSourceRateNamesAKnownSource() {
        let parse = SettingParsers.rates(names: Catalogue.fetchSources)
        #expect(parse("tmdb=40,kofic=10") == ["tmdb": 40, "kofic": 10])
        #expect(parse("imdb=5") == nil)
    }
}
