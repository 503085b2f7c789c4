import MarqueeCore
public import MarqueeStore

// MARK: - MovieDetails + text for people

extension MovieDetails {
    /// What `marquee query movie` prints: a heading, the facts, then tables of the titles and taglines per
    /// language, the reviews, the stored images and the linked KOFIC movies (each when there is any), and a
    /// line of counts.
    public var text: String {
        let movie = self
        var lines: [String] = []
        var heading = movie.title ?? movie.originalTitle ?? "(no title)"
        if let original = movie.originalTitle, original != heading { heading += " (\(original))" }
        lines.append("\(heading) — TMDB \(movie.movieID)")
        var facts = TextTable([.init(header: "", maxWidth: 20), .init(header: "", maxWidth: 100)])
        func fact(_ name: String, _ value: String?) {
            if let value, !value.isEmpty { facts.append([name, value]) }
        }
        fact(
            "original title",
            movie.originalTitle.map { title in movie.originalLanguage.map { "\(title) [\($0)]" } ?? title }
        )
        fact("released", movie.releaseDate)
        fact("runtime", movie.facts?.runtime.map { "\($0) min" })
        fact("genres", movie.genres.map { $0.name ?? "#\($0.genreID)" }.joined(separator: ", "))
        fact("popularity", movie.popularity.map { TextFormat.decimal($0, digits: 1) })
        fact(
            "votes",
            movie.voteAverage.map { average in
                TextFormat.decimal(average, digits: 1)
                    + (movie.voteCount.map { " (\(TextFormat.grouped($0)) votes)" } ?? "")
            }
        )
        fact("status", movie.facts?.status)
        fact("budget", movie.facts?.budget.map { "$" + TextFormat.grouped($0) })
        fact("revenue", movie.facts?.revenue.map { "$" + TextFormat.grouped($0) })
        fact("imdb", movie.facts?.imdbID)
        fact("countries", movie.facts?.productionCountries.joined(separator: ", "))
        fact("adult", movie.isAdult == true ? "yes" : nil)
        fact("refreshed", movie.refresh.map { Self.refreshText($0) })
        lines.append(facts.render(showingHeader: false))

        if !movie.localized.isEmpty {
            var titles = TextTable([
                .init(header: "LANGUAGE"), .init(header: "TITLE", maxWidth: 50),
                .init(header: "TAGLINE", maxWidth: 60),
            ])
            for localized in movie.localized {
                titles.append([localized.language, localized.title ?? "–", localized.tagline ?? ""])
            }
            lines += ["", titles.render()]
        }
        if !movie.reviews.isEmpty {
            var reviews = TextTable([
                .init(header: "REVIEW BY", maxWidth: 24), .init(header: "RATING", alignment: .right),
                .init(header: "WRITTEN"), .init(header: "EXCERPT", maxWidth: 70),
            ])
            for review in movie.reviews {
                reviews.append([
                    review.author ?? "–", TextFormat.decimal(review.rating, digits: 1),
                    review.createdAt.map { String($0.prefix(10)) } ?? "–", review.excerpt ?? "",
                ])
            }
            lines += ["", reviews.render()]
        }
        if !movie.images.isEmpty {
            lines += ["", StoredImage.table(movie.images)]
        }
        if !movie.koficLinks.isEmpty {
            var links = TextTable([
                .init(header: "KOFIC"), .init(header: "KOREAN TITLE"), .init(header: "OPENED"),
                .init(header: "LINKED BY"),
            ])
            for link in movie.koficLinks {
                links.append([link.movieCd, link.title ?? "–", link.openDate ?? "–", link.method])
            }
            lines += ["", links.render()]
        }
        lines += [
            "",
            "movie \(movie.movieID): "
                + [
                    TextFormat.count(movie.localized.count, "language"), TextFormat.count(movie.genres.count, "genre"),
                    TextFormat.count(movie.reviews.count, "review"), TextFormat.count(movie.images.count, "image"),
                    TextFormat.count(movie.koficLinks.count, "KOFIC link"),
                ].joined(separator: ", ") + (movie.facts == nil ? "; details not fetched yet" : ""),
        ]
        return lines.joined(separator: "\n")
    }

    /// `2024-03-01 12:00:00 UTC (change)`: the refresh time to the second, and why.
    static func refreshText(_ refresh: MovieRefresh) -> String {
        let instant = UTCInstant(milliseconds: refresh.refreshedAtMilliseconds)
        return "\(instant.date) \(instant.time) UTC (\(refresh.reason))"
    }
}
