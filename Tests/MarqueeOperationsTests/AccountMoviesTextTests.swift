import MarqueeOperations
import MarqueeStore
import Testing

/// The text form of `marquee query ratings`: the account and the list, a table, a count.
@Suite struct AccountMoviesTextTests {
    @Test func ratedMoviesShowTheRatingAndTheDay() throws {
        let movies = try decoded(
            AccountMovies.self,
            """
            {"account": "default", "account_id": 548, "username": "travisbell", "name": null, "fetched_at": 1,
             "list": "rated",
             "movies": [{"movie_id": 496243, "title": "Parasite", "original_title": "기생충",
                         "release_date": "2019-05-30", "rating": 10, "rated_at": "2024-02-03T21:07:11.000Z",
                         "fetched_at": 1},
                        {"movie_id": 550, "title": null, "original_title": "Fight Club", "release_date": null,
                         "rating": 0.5, "rated_at": null, "fetched_at": 1}]}
            """
        )
        #expect(
            movies.text == """
                TMDB account default (548, travisbell): rated movies
                 MOVIE  TITLE       RELEASED    RATING  RATED
                496243  Parasite    2019-05-30    10.0  2024-02-03
                   550  Fight Club  –              0.5  –
                2 movies
                """
        )
    }

    @Test func aListWithoutDetailsSaysSoAndHasNoRatingColumns() throws {
        let movies = try decoded(
            AccountMovies.self,
            """
            {"account": "family", "account_id": null, "username": null, "name": null, "fetched_at": null,
             "list": "watchlist",
             "movies": [{"movie_id": 872585, "title": "Oppenheimer", "original_title": "Oppenheimer",
                         "release_date": "2023-07-19", "rating": null, "rated_at": null, "fetched_at": 1}]}
            """
        )
        #expect(
            movies.text == """
                TMDB account family (details not fetched yet): watchlist
                 MOVIE  TITLE        RELEASED
                872585  Oppenheimer  2023-07-19
                1 movie
                """
        )
    }
}
