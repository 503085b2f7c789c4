public import MarqueeStore

// MARK: - MovieSummary + text for people

extension MovieSummary {
    /// What `marquee query movies` prints: a table of the movies (ID, TITLE, ORIGINAL TITLE, RELEASED,
    /// POPULARITY, VOTE, LANGUAGES) and a line saying how many, and whether `--limit` cut the list.
    ///
    /// - Parameters:
    ///   - movies: The movies found, most popular first (at least one).
    ///   - title: The text searched for.
    ///   - limit: The most movies asked for.
    public static func text(_ movies: [MovieSummary], title: String, limit: Int) -> String {
        var table = TextTable([
            .init(header: "ID", alignment: .right), .init(header: "TITLE"), .init(header: "ORIGINAL TITLE"),
            .init(header: "RELEASED"), .init(header: "POPULARITY", alignment: .right),
            .init(header: "VOTE", alignment: .right), .init(header: "LANGUAGES"),
        ])
        for movie in movies {
            table.append([
                "\(movie.movieID)", movie.title ?? "–", movie.originalTitle ?? "–", movie.releaseDate ?? "–",
                TextFormat.decimal(movie.popularity, digits: 1), TextFormat.decimal(movie.voteAverage, digits: 1),
                movie.languages.joined(separator: " "),
            ])
        }
        let more = movies.count == limit ? " (the first \(limit): --limit shows more)" : ""
        return table.render() + "\n"
            + "\(TextFormat.count(movies.count, "movie")) whose title contains '\(title)', most popular first\(more)"
    }
}
