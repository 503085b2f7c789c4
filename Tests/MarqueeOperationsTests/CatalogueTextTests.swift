import MarqueeOperations
import MarqueeStore
import Testing

import struct Foundation.Data
import class Foundation.JSONDecoder

/// A read model as the store's query returns it, from its JSON form (docs/query.md).
func decoded<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(json.utf8))
}

/// The text forms of `marquee query`: movies, a movie, box office, books, counts.
@Suite struct CatalogueTextTests {
    @Test func moviesAreATableMostPopularFirstWithTheLimitSaid() throws {
        let movies = try decoded(
            [MovieSummary].self,
            """
            [{"movie_id": 496243, "title": "기생충", "original_title": "기생충", "release_date": "2019-05-30",
              "popularity": 1234.567, "vote_average": 8.5, "languages": ["en-US", "ko-KR"]},
             {"movie_id": 27205, "original_title": "Inception", "vote_average": 8.4, "languages": []}]
            """
        )
        #expect(
            MovieSummary.text(movies, title: "기생", limit: 2) == """
                    ID  TITLE   ORIGINAL TITLE  RELEASED    POPULARITY  VOTE  LANGUAGES
                496243  기생충  기생충          2019-05-30     1,234.6   8.5  en-US ko-KR
                 27205  –       Inception       –                    –   8.4
                2 movies whose title contains '기생', most popular first (the first 2: --limit shows more)
                """
        )
        #expect(MovieSummary.text(movies, title: "x", limit: 20).hasSuffix("most popular first"))
    }

    @Test func aMovieShowsItsFactsThenATablePerKindOfDetail() throws {
        let movie = try decoded(
            MovieDetails.self,
            """
            {"movie_id": 496243, "title": "Parasite", "original_title": "기생충", "original_language": "ko",
             "release_date": "2019-05-30", "popularity": 33.25, "vote_average": 8.5, "vote_count": 17012,
             "details": {"runtime": 133, "budget": 11363000, "status": "Released", "imdb_id": "tt6751668",
                         "production_countries": ["KR"], "spoken_languages": [], "origin_country": []},
             "localized": [{"language": "en-US", "title": "Parasite", "tagline": "Act like you own the place."}],
             "genres": [{"genre_id": 35, "name": "Comedy"}, {"genre_id": 18}],
             "reviews": [{"review_id": "r1", "author": "critic", "rating": 9, "created_at": "2019-10-11T12:00:00Z",
                          "excerpt": "A masterpiece."}],
             "images": [{"role": "poster", "sha256": "0123456789abcdef0123", "source_url": "https://x/p.jpg",
                         "format": "jpeg", "width": 500, "height": 750, "bytes": 81234,
                         "variants": [{"width": 185, "height": 278, "format": "webp", "bytes": 9100,
                                       "store_key": "01/0123/185.webp"}]}],
             "kofic_links": [{"movie_cd": "20183782", "title": "기생충", "open_date": "20190530", "method": "title"}],
             "refresh": {"reason": "change", "refreshed_at_ms": 1709294400123}}
            """
        )
        let lines = movie.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Parasite (기생충) — TMDB 496243")
        #expect(lines.contains("original title  기생충 [ko]"))
        #expect(lines.contains("runtime         133 min"))
        #expect(lines.contains("genres          Comedy, #18"))
        #expect(lines.contains("votes           8.5 (17,012 votes)"))
        #expect(lines.contains("budget          $11,363,000"))
        #expect(lines.contains("refreshed       2024-03-01 12:00:00 UTC (change)"))
        #expect(!lines.contains { $0.hasPrefix("revenue") || $0.hasPrefix("adult") })
        #expect(lines.contains("LANGUAGE  TITLE     TAGLINE"))
        #expect(lines.contains("en-US     Parasite  Act like you own the place."))
        #expect(lines.contains("REVIEW BY  RATING  WRITTEN     EXCERPT"))
        #expect(lines.contains("critic        9.0  2019-10-11  A masterpiece."))
        #expect(lines.contains("poster  500×750 jpeg 81 KB  185w webp 9 KB  –       0123456789abc…"))
        #expect(lines.contains("20183782  기생충        20190530  title"))
        #expect(lines.last == "movie 496243: 1 language, 2 genres, 1 review, 1 image, 1 KOFIC link")
    }

    @Test func aMovieNotYetDetailedSaysSo() throws {
        let movie = try decoded(
            MovieDetails.self,
            #"{"movie_id": 1, "localized": [], "genres": [], "reviews": [], "images": [], "kofic_links": []}"#
        )
        #expect(
            movie.text == """
                (no title) — TMDB 1


                movie 1: 0 languages, 0 genres, 0 reviews, 0 images, 0 KOFIC links; details not fetched yet
                """
        )
        #expect(movie.refresh == nil)
    }

    @Test func aBoxOfficeListHasItsPeriodRanksAndLinks() throws {
        let chart = try decoded(
            BoxOfficeChart.self,
            """
            {"period": "weekend", "period_key": "202402", "show_range_start": "20240112", "show_range_end": "20240114",
             "entries": [
               {"rank": 1, "is_new": true, "movie_cd": "1", "movie_name": "서울의 봄", "audience_count": 1234567,
                "sales_share": 41.25, "tmdb_movie_id": 919207, "tmdb_title": "12.12: The Day"},
               {"rank": 2, "rank_change": -1, "movie_cd": "2", "audience_count": 800}]}
            """
        )
        #expect(
            chart.heading(latest: true)
                == "Weekend box office for 20240112 – 20240114 (week 202402), the latest in the store"
        )
        let lines = chart.text(latest: false).split(separator: "\n").map(String.init)
        #expect(lines.first == "Weekend box office for 20240112 – 20240114 (week 202402)")
        #expect(lines[2].hasPrefix("   1     new  서울의 봄  –       1,234,567      –            –  41.3%"))
        #expect(lines[2].hasSuffix("919207 12.12: The Day"))
        #expect(lines[3].hasPrefix("   2      -1  2          –             800"))
        #expect(lines.last == "2 entries, 1 linked to a TMDB movie")

        var daily = chart
        daily.period = .daily
        daily.showRangeEnd = "20240112"
        daily.entries.removeLast()
        #expect(daily.heading(latest: false) == "Daily box office for 20240112")
        #expect(daily.text(latest: false).hasSuffix("\n1 entry, 1 linked to a TMDB movie"))
    }

    @Test func booksSayWhatWasLookedForAndWhetherTheCoverIsStored() throws {
        let books = try decoded(
            [BookSummary].self,
            """
            [{"book_key": "openlibrary:work:OL1W", "title": "The Hobbit", "authors": [{"name": "J.R.R. Tolkien"}],
              "first_publish_year": 1937, "edition_count": 1234, "cover_id": 42}]
            """
        )
        let criteria = BookSummary.criteria(title: "hobbit", author: "tolkien")
        #expect(criteria == "'hobbit' in the title and 'tolkien' in an author's name")
        #expect(BookSummary.criteria(title: nil, author: "hood") == "'hood' in an author's name")
        #expect(
            BookSummary.text(books, criteria: criteria, limit: 20) == """
                TITLE       AUTHORS         FIRST  EDITIONS  COVER  KEY
                The Hobbit  J.R.R. Tolkien   1937     1,234  id 42  openlibrary:work:OL1W
                1 book with 'hobbit' in the title and 'tolkien' in an author's name, most editions first
                """
        )
    }

    @Test func countsAreATableOfEveryTableThenTheStoreAndItsSchema() throws {
        var counts = StoreCounts()
        counts.movies = 1234
        counts.boxOfficeEntries = 10
        let location = try StoreLocation(parsing: "sqlite:/tmp/catalogue.db")
        let text = counts.text(location: location, schemaVersion: 2)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "TABLE                ROWS")
        #expect(lines.count == 19, "a header, 17 tables and the store")
        #expect(lines.contains("kofic_catalogue         0"))
        #expect(lines.contains("account_ratings         0"))
        #expect(lines.contains("movies              1,234"))
        #expect(lines.contains("genres                  0"))
        #expect(lines.contains("box_office_entries     10"))
        #expect(lines.last == "sqlite:/tmp/catalogue.db, schema version 2")
        #expect(counts.text(location: location, schemaVersion: nil).hasSuffix(", no schema"))
        #expect(counts.storedTable == "STORED               ROWS\nmovies              1,234\nbox office entries     10")
    }
}

@Suite struct CatalogueQueryTests {
    @Test func daysAreRealCalendarDaysWrittenWithDashes() {
        #expect(CatalogueQuery.day("20240229") == "2024-02-29")
        #expect(CatalogueQuery.day("2024-02-29") == "2024-02-29")
        #expect(CatalogueQuery.day("yesterday") == "yesterday")
        #expect(CatalogueQuery.isDay("2024-02-29"))
        #expect(!CatalogueQuery.isDay("2023-02-29"))
        #expect(!CatalogueQuery.isDay("2024-2-9"))
        #expect(!CatalogueQuery.isDay("0000-01-01"))
        #expect(!CatalogueQuery.isDay("２０２４-01-01"))
    }

    @Test func weeksSearchesAndLimitsAreChecked() {
        #expect(CatalogueQuery.isWeek("202401"))
        #expect(CatalogueQuery.isWeek("202453"))
        #expect(!CatalogueQuery.isWeek("202454"))
        #expect(!CatalogueQuery.isWeek("202400"))
        #expect(!CatalogueQuery.isWeek("2024-1"))
        #expect(CatalogueQuery.isSearchable("기생"))
        #expect(!CatalogueQuery.isSearchable(" -!- "))
        #expect(CatalogueQuery.isLimit(1) && CatalogueQuery.isLimit(Store.maximumLimit))
        #expect(!CatalogueQuery.isLimit(0) && !CatalogueQuery.isLimit(Store.maximumLimit + 1))
    }
}
