import MarqueeCore
import MarqueeJSON
import Testing

/// The `kofic.movies` payload: KOFIC's catalogue, paged, with its filters.
@Suite struct KOFICMoviesJobTests {
    @Test func aBarePayloadIsTheWholeCatalogueFromPageOne() throws {
        let job = try FetchJob.decode(Array(#"{"v":1,"kind":"kofic.movies"}"#.utf8))
        #expect(job == .koficMovies(query: .init(), page: 1, follow: .none))
        guard case .koficMovies(let query, _, _) = job else { return }
        #expect(query.perPage == 100)
        #expect(query.lastPage == 1000)
    }

    @Test func everyFilterSurvivesARoundTripAndDefaultsAreLeftOut() throws {
        let job = FetchJob.koficMovies(
            query: .init(
                openFrom: 2020,
                openTo: 2024,
                productionFrom: 2019,
                productionTo: 2023,
                title: "기생충",
                director: "봉준호",
                perPage: 20,
                lastPage: 7
            ),
            page: 3,
            follow: Follow(details: true, images: true)
        )
        #expect(try FetchJob.decode(job.encoded()) == job)
        let bare = String(
            decoding: FetchJob.koficMovies(query: .init(), page: 1, follow: .none).encoded(),
            as: UTF8.self
        )
        #expect(bare == #"{"kind":"kofic.movies","page":1,"v":1}"#)
    }

    @Test func theKeyNamesThePageAndEveryFilterButNotTheCrawlsExtent() {
        let query = FetchJob.KOFICMovieQuery(openFrom: 2020, openTo: 2024, director: "봉준호")
        let page2 = FetchJob.koficMovies(query: query, page: 2, follow: .none)
        #expect(page2.dedupeKey == "kofic:movies:2:open=2020-2024:prdt=-:per=100:director=봉준호:title=")
        var bounded = query
        bounded.lastPage = 5
        #expect(
            FetchJob.koficMovies(query: bounded, page: 2, follow: Follow(details: true)).dedupeKey == page2.dedupeKey
        )
        #expect(FetchJob.koficMovies(query: query, page: 3, follow: .none).dedupeKey != page2.dedupeKey)
        var other = query
        other.openTo = 2023
        #expect(FetchJob.koficMovies(query: other, page: 2, follow: .none).dedupeKey != page2.dedupeKey)
    }

    @Test(arguments: [
        (
            #"{"v":1,"kind":"kofic.movies","open_from":2024,"open_to":2020}"#,
            "field 'open_to': open_to 2020 is before open_from 2024"
        ),
        (
            #"{"v":1,"kind":"kofic.movies","production_from":1869}"#,
            "field 'production_from': expected an integer from 1870 to 2200, got 1869"
        ),
        (#"{"v":1,"kind":"kofic.movies","per_page":0}"#, "field 'per_page': expected an integer from 1 to 100, got 0"),
        (
            #"{"v":1,"kind":"kofic.movies","last_page":1001}"#,
            "field 'last_page': expected an integer from 1 to 1000, got 1001"
        ),
        (#"{"v":1,"kind":"kofic.movies","director":" "}"#, "field 'director': must not be empty"),
        (
            #"{"v":1,"kind":"kofic.movies","follow":{"pages":2,"details":true}}"#,
            "field 'follow.pages': a kofic.movies crawl runs to the end of the list; bound it with last_page, "
                + "not follow.pages"
        ),
        (#"{"v":1,"kind":"kofic.movies","openFrom":2020}"#, "field 'openFrom': unknown field"),
    ])
    func badPayloadsSayWhatIsWrong(payload: String, message: String) throws {
        let error = try #require(throws: PayloadError.self) { try FetchJob.decode(Array(payload.utf8)) }
        #expect(error.description == message)
    }

    @Test func codesWithALetterAreKOFICCodes() throws {
        // KOFIC lists films released online only under codes such as 2023C165.
        let job = try FetchJob.decode(Array(#"{"v":1,"kind":"kofic.movie","movie_cd":"2023C165"}"#.utf8))
        #expect(job == .koficMovie(code: "2023C165", follow: .none))
        #expect(throws: PayloadError.self) {
            try FetchJob.decode(Array(#"{"v":1,"kind":"kofic.movie","movie_cd":"2023c165"}"#.utf8))
        }
    }
}
