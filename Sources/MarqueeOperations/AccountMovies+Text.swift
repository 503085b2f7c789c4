public import MarqueeStore

// MARK: - AccountMovies + text for people

extension AccountMovies {
    /// What `marquee query ratings` prints: a heading naming the account (its TMDB id and username when its
    /// details were fetched, its v4 object id for an access-token account) and the list, a table of the movies (the rating and when for the rated list), and a
    /// count.
    public var text: String {
        let isRated = self.list == "rated"
        var columns: [TextTable.Column] = [
            .init(header: "MOVIE", alignment: .right), .init(header: "TITLE", maxWidth: 40), .init(header: "RELEASED"),
        ]
        if isRated { columns += [.init(header: "RATING", alignment: .right), .init(header: "RATED")] }
        var table = TextTable(columns)
        for movie in self.movies {
            var row = ["\(movie.movieID)", movie.title ?? movie.originalTitle ?? "–", movie.releaseDate ?? "–"]
            if isRated {
                row += [
                    movie.rating.map { TextFormat.decimal($0, digits: 1) } ?? "–",
                    movie.ratedAt.map { String($0.prefix(10)) } ?? "–",
                ]
            }
            table.append(row)
        }
        let who =
            if let id = self.accountID {
                "TMDB account \(self.account) (\(id)\(self.username.map { ", \($0)" } ?? ""))"
            } else if let objectID = self.accountObjectID {
                "TMDB account \(self.account) (v4 \(objectID))"
            } else {
                "TMDB account \(self.account) (details not fetched yet)"
            }
        let what =
            switch self.list {
            case "rated": "rated movies"
            case "favorite": "favourites"
            default: "watchlist"
            }
        let count = TextFormat.count(self.movies.count, "movie")
        return ["\(who): \(what)", table.render(), count].joined(separator: "\n")
    }
}
