import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

@Suite struct TMDBAdapterTests {
    // MARK: - Lists and search

    @Test func nowPlayingYieldsMoviesWithIntegerVoteAveragesAndJapaneseTitles() throws {
        let job = FetchJob.tmdbList(list: .nowPlaying, page: 1, language: "ko-KR", region: "KR", follow: .none)
        let result = try parse("tmdb/movie_now_playing_2022-06.json", for: job)
        #expect(result.records(.movie).count == 20)
        #expect(result.records(.movieLocalized).count == 20)
        #expect(result.fetchJobs.isEmpty)
        #expect(result.imageJobs.isEmpty)

        let movie = try #require(result.record("tmdb:movie:338953"))
        #expect(movie.fetchedAt == testFetchedAt)
        #expect(movie.data["original_title"] == .string("Fantastic Beasts: The Secrets of Dumbledore"))
        #expect(movie.data["vote_average"] == .number(6.9))
        #expect(movie.data["vote_count"] == .integer(1795))
        #expect(movie.data["popularity"] == .number(3456.961))
        #expect(movie.data["release_date"] == .string("2022-04-06"))
        #expect(movie.data["genre_ids"] == .array([.integer(14), .integer(12), .integer(28)]))
        #expect(movie.data["adult"] == .bool(false))
        #expect(movie.data["poster_path"] == .string("/jrgifaYeUtTnaH7NF5Drkgjg2MB.jpg"))

        // vote_average 6 (an integer in the body) is still a number.
        let seeForMe = try #require(result.record("tmdb:movie:825808"))
        #expect(seeForMe.data["vote_average"] == .number(6))

        let dragonBall = try #require(result.record("tmdb:movie:610150"))
        #expect(dragonBall.data["original_title"] == .string("ドラゴンボール超：スーパーヒーロー"))
        #expect(dragonBall.data["original_language"] == .string("ja"))
        let localized = try #require(result.record("tmdb:movie:610150:ko-KR"))
        #expect(localized.kind == .movieLocalized)
        #expect(localized.data["title"] == .string("Dragon Ball Super: Super Hero"))
        #expect(localized.data["language"] == .string("ko-KR"))
        #expect(localized.data["movie_id"] == .integer(610150))
    }

    @Test func theOldestSerializationParsesTheSame() throws {
        let job = FetchJob.tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none)
        let result = try parse("tmdb/movie_popular_2016.json", for: job)
        let movie = try #require(result.record("tmdb:movie:297761"))
        #expect(movie.data["vote_average"] == .number(5.91))
        #expect(movie.data["popularity"] == .number(48.261451))
        #expect(movie.data["release_date"] == .string("2016-08-03"))
        #expect(result.record("tmdb:movie:297761:en-US")?.data["title"] == .string("Suicide Squad"))
    }

    @Test func searchToleratesMissingDatesNullPostersAndEmptyOverviews() throws {
        let job = FetchJob.tmdbSearch(
            query: "fast",
            page: 1,
            language: "en-US",
            year: nil,
            follow: Follow(images: true)
        )
        let result = try parse("tmdb/search_movie_fast.json", for: job)
        #expect(result.records(.movie).count == 20)

        let noDate = try #require(result.record("tmdb:movie:755679"))
        #expect(noDate.data["release_date"] == .null)
        #expect(noDate.data["backdrop_path"] == .null)
        let noPoster = try #require(result.record("tmdb:movie:945937"))
        #expect(noPoster.data["poster_path"] == .null)
        #expect(result.record("tmdb:movie:545669:en-US")?.data["overview"] == .null)
        let fastX = try #require(result.record("tmdb:movie:385687"))
        #expect(fastX.data["vote_average"] == .number(0))

        // Images without details: the poster of each listed movie, none for the missing ones.
        #expect(
            result.imageJobs.contains(
                ImageJob(
                    url: "https://image.tmdb.org/t/p/original/qCNCbzJ2BVuoZN7Iee3UAtdTpnx.jpg",
                    owner: "tmdb:movie:755679",
                    role: .poster
                )
            )
        )
        #expect(!result.imageJobs.contains { $0.owner == "tmdb:movie:945937" })
        #expect(result.imageJobs.allSatisfy { $0.url.hasPrefix("https://image.tmdb.org/t/p/original/") })
    }

    @Test func emptySearchPageYieldsNothing() throws {
        let job = FetchJob.tmdbSearch(
            query: "",
            page: 1,
            language: "en-US",
            year: nil,
            follow: Follow(pages: 5, details: true)
        )
        let result = try parse("tmdb/search_movie_empty.json", for: job)
        #expect(result == SourceResult())
    }

    // MARK: - Follow-ups

    @Test func pageOneFansOutUpToFollowPages() throws {
        let follow = Follow(pages: 4)
        let job = FetchJob.tmdbList(list: .topRated, page: 1, language: "en-US", region: nil, follow: follow)
        let result = try parse("tmdb/movie_top_rated_2023.json", for: job)
        #expect(
            result.fetchJobs
                == (2...4).map { .tmdbList(list: .topRated, page: $0, language: "en-US", region: nil, follow: follow) }
        )
    }

    @Test func laterPagesFanOutNothing() throws {
        let job = FetchJob.tmdbList(list: .topRated, page: 3, language: "en-US", region: nil, follow: Follow(pages: 10))
        let result = try parse("tmdb/movie_top_rated_2023.json", for: job)
        #expect(result.fetchJobs.isEmpty)
        #expect(result.records(.movie).count == 20)
    }

    @Test func fanOutIsBoundedByTotalPages() throws {
        // search_movie_river has 71 pages; asking for 500 queues pages 2…71.
        let follow = Follow(pages: 500)
        let job = FetchJob.tmdbSearch(query: "river", page: 1, language: "en-US", year: nil, follow: follow)
        let result = try parse("tmdb/search_movie_river.json", for: job)
        #expect(result.fetchJobs.count == 70)
        #expect(
            result.fetchJobs.first == .tmdbSearch(query: "river", page: 2, language: "en-US", year: nil, follow: follow)
        )
        #expect(
            result.fetchJobs.last == .tmdbSearch(query: "river", page: 71, language: "en-US", year: nil, follow: follow)
        )
    }

    @Test func detailsFollowQueuesOneDetailJobPerMovieAndLeavesImagesToIt() throws {
        let follow = Follow(pages: 1, details: true, reviews: true, images: true)
        let job = FetchJob.tmdbList(list: .popular, page: 1, language: "ja-JP", region: nil, follow: follow)
        let result = try parse("tmdb/movie_popular_2020-07.json", for: job)
        let detailFollow = Follow(details: false, reviews: true, images: true)
        #expect(result.fetchJobs.count == 20)
        #expect(result.fetchJobs.first == .tmdbMovie(id: 583083, language: "ja-JP", follow: detailFollow))
        #expect(
            result.fetchJobs.allSatisfy { if case .tmdbMovie(_, _, let f) = $0 { f == detailFollow } else { false } }
        )
        #expect(result.imageJobs.isEmpty)
    }

    // MARK: - Details

    @Test func detailsYieldTheFullMovieAndLocalizedRecords() throws {
        let job = FetchJob.tmdbMovie(id: 271110, language: "en-US", follow: Follow(images: true, backdrops: true))
        let result = try parse("tmdb/movie_271110_details.json", for: job)
        let movie = try #require(result.record("tmdb:movie:271110"))
        #expect(movie.data["runtime"] == .integer(147))
        #expect(movie.data["budget"] == .integer(250_000_000))
        #expect(movie.data["revenue"] == .integer(1_153_296_293))
        #expect(movie.data["imdb_id"] == .string("tt3498820"))
        #expect(movie.data["status"] == .string("Released"))
        #expect(movie.data["vote_count"] == .integer(19795))
        #expect(movie.data["genre_ids"] == .array([.integer(12), .integer(28), .integer(878)]))
        let localized = try #require(result.record("tmdb:movie:271110:en-US"))
        #expect(localized.data["title"] == .string("Captain America: Civil War"))
        #expect(localized.data["tagline"] == .string("Divided We Fall"))
        // Genres of a details answer are named in the job's language.
        #expect(result.record("tmdb:genre:878:en-US")?.data["name"] == .string("Science Fiction"))
        #expect(
            Set(result.imageJobs) == [
                ImageJob(
                    url: "https://image.tmdb.org/t/p/original/rAGiXaUfPzY7CDEyNKUofk3Kw2e.jpg",
                    owner: "tmdb:movie:271110",
                    role: .poster
                ),
                ImageJob(
                    url: "https://image.tmdb.org/t/p/original/7FWlcZq3r6525LWOcvO9kNWurN1.jpg",
                    owner: "tmdb:movie:271110",
                    role: .backdrop
                ),
            ]
        )
    }

    @Test(arguments: [
        (Follow(images: true), [ImageJob.Role.poster]),
        (Follow(backdrops: true), [.backdrop]),
        (Follow(), []),
    ])
    func imagesAndBackdropsAreAskedForApart(follow: Follow, roles: [ImageJob.Role]) throws {
        let job = FetchJob.tmdbMovie(id: 271110, language: "en-US", follow: follow)
        #expect(try parse("tmdb/movie_271110_details.json", for: job).imageJobs.map(\.role) == roles)
        // The same from a list page without details: the listed movies' posters or backdrops only.
        let list = FetchJob.tmdbSearch(query: "fast", page: 1, language: "en-US", year: nil, follow: follow)
        let listed = Set(try parse("tmdb/search_movie_fast.json", for: list).imageJobs.map(\.role))
        #expect(listed == Set(roles))
    }

    @Test func detailsNormaliseZerosAndEmptyStringsToNull() throws {
        let job = FetchJob.tmdbMovie(id: 51888, language: "en-US", follow: Follow(images: true))
        let result = try parse("tmdb/movie_51888_details.json", for: job)
        let movie = try #require(result.record("tmdb:movie:51888"))
        #expect(movie.data["budget"] == .null)
        #expect(movie.data["revenue"] == .null)
        #expect(movie.data["backdrop_path"] == .null)
        #expect(movie.data["runtime"] == .integer(45))
        #expect(movie.data["collection_id"] == .integer(141748))
        let localized = try #require(result.record("tmdb:movie:51888:en-US"))
        #expect(localized.data["tagline"] == .null)
        #expect(localized.data["homepage"] == .null)
        // No backdrop: only the poster.
        #expect(result.imageJobs.map(\.role) == [.poster])
    }

    @Test func detailsForAnotherMovieAreMalformed() throws {
        let job = FetchJob.tmdbMovie(id: 550, language: "en-US", follow: .none)
        let error = parseError(try Fixtures.response("tmdb/movie_271110_details.json"), for: job)
        #expect(error?.code == .malformed)
        #expect(error?.isRetriable == true)
    }

    @Test func appendedReviewsBecomeRecordsAndFurtherReviewPagesAreQueued() throws {
        let reviews = String(decoding: try Fixtures.bytes("tmdb/movie_278_reviews.json"), as: UTF8.self)
            .replacing("\"total_pages\": 1", with: "\"total_pages\": 3")
        let body =
            #"{"id": 278, "title": "The Shawshank Redemption", "poster_path": "/p.jpg", "reviews": "#
            + reviews
            + #", "images": {"posters": [{"file_path": "/en.jpg", "iso_639_1": "en"}, {"file_path": "/ko.jpg", "iso_639_1": "ko"}]}}"#
        let job = FetchJob.tmdbMovie(id: 278, language: "ko-KR", follow: Follow(pages: 5, reviews: true))
        let result = try testAdapters.parse(response(200, body), for: job, fetchedAt: testFetchedAt)
        #expect(result.records(.review).count == 7)
        #expect(result.fetchJobs == [2, 3].map { .tmdbReviews(id: 278, page: $0, language: "ko-KR", follow: .none) })
        #expect(result.record("tmdb:movie:278:ko-KR")?.data["poster_path"] == .string("/ko.jpg"))
    }

    // MARK: - Reviews

    @Test func reviewsKeepNullRatingsAndRepairAvatarURLs() throws {
        let job = FetchJob.tmdbReviews(id: 278, page: 1, language: "en-US", follow: .none)
        let result = try parse("tmdb/movie_278_reviews.json", for: job)
        #expect(result.records(.review).count == 7)
        let unrated = try #require(result.record("tmdb:review:5bc8a200c3a36829c8019817"))
        #expect(unrated.data["rating"] == .null)
        #expect(unrated.data["author"] == .string("Andrew Gentry"))
        #expect(unrated.data["username"] == .string("AndrewGentry"))
        #expect(unrated.data["movie_id"] == .integer(278))
        let rated = try #require(result.record("tmdb:review:578193f29251417c28001764"))
        #expect(rated.data["rating"] == .number(10))
        #expect(rated.data["author_name"] == .null)
        let gravatar = try #require(result.record("tmdb:review:5ae800510e0a264fa7000c70"))
        #expect(
            gravatar.data["avatar_url"]
                == .string("https://www.gravatar.com/avatar/2bd751954d44dbef99755499b602a5f1.jpg")
        )
        let arabic = try #require(result.record("tmdb:review:5723a329c3a3682e720005db"))
        #expect(arabic.data["content"].string?.contains("محمد الشعراوى") == true)
    }

    @Test func citizenKaneReviewsCarryTimestampsAndURLs() throws {
        let job = FetchJob.tmdbReviews(id: 15, page: 1, language: "en-US", follow: Follow(pages: 3))
        let result = try parse("tmdb/movie_15_reviews.json", for: job)
        let review = try #require(result.record("tmdb:review:538a50570e0a2605ff000812"))
        #expect(review.data["author"] == .string("Gurre"))
        #expect(review.data["rating"] == .number(9))
        #expect(review.data["created_at"] == .string("2014-05-31T21:57:43.868Z"))
        #expect(review.data["updated_at"] == .string("2021-06-23T15:57:26.635Z"))
        #expect(review.data["url"] == .string("https://www.themoviedb.org/review/538a50570e0a2605ff000812"))
        // total_pages is 1: nothing to fan out.
        #expect(result.fetchJobs.isEmpty)
    }

    @Test func emptyReviewPageYieldsNothing() throws {
        let job = FetchJob.tmdbReviews(id: 497, page: 1, language: "en-US", follow: Follow(pages: 9))
        #expect(try parse("tmdb/movie_497_reviews_empty.json", for: job) == SourceResult())
    }

    // MARK: - Genres and configuration

    @Test func genreListYieldsNineteenGenres() throws {
        let result = try parse("tmdb/genre_movie_list.json", for: .tmdbGenres(language: "en"))
        #expect(result.records(.genre).count == 19)
        let action = try #require(result.record("tmdb:genre:28:en"))
        #expect(action.data == ["genre_id": .integer(28), "language": .string("en"), "name": .string("Action")])
    }

    @Test func configurationGivesTheSecureBaseURLAndSizes() throws {
        let configuration = try TMDBConfiguration.parse(try Fixtures.bytes("tmdb/configuration.json"))
        #expect(configuration.secureBaseURL == "https://image.tmdb.org/t/p")
        #expect(configuration.posterSizes == ["w92", "w154", "w185", "w342", "w500", "w780", "original"])
        #expect(configuration.backdropSizes == ["w300", "w780", "w1280", "original"])
    }

    @Test func configurationErrors() throws {
        #expect(throws: SourceError.self) { try TMDBConfiguration.parse(Array("{\"images\": {}}".utf8)) }
        #expect(throws: SourceError.self) { try TMDBConfiguration.parse(Array("{\"images\": ".utf8)) }
        do {
            _ = try TMDBConfiguration.parse(
                response(
                    401,
                    #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#
                ),
                configuration: testConfiguration,
                fetchedAt: testFetchedAt
            )
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unauthorized(.tmdb))
        }
    }
}
