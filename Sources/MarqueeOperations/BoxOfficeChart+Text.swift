public import MarqueeStore

// MARK: - BoxOfficeChart + text for people

extension BoxOfficeChart {
    /// What `marquee query box-office` prints: the ``heading(latest:)``, a table of the entries (RANK, CHANGE,
    /// MOVIE, OPENED, AUDIENCE, TOTAL, SALES, SHARE, SCREENS, SHOWS and the linked TMDB movie), and a line
    /// saying how many entries are linked to a TMDB movie.
    ///
    /// - Parameter latest: Whether the chart is the latest of its kind (no day or week was asked for).
    public func text(latest: Bool) -> String {
        var table = TextTable([
            .init(header: "RANK", alignment: .right), .init(header: "CHANGE", alignment: .right),
            .init(header: "MOVIE", maxWidth: 30), .init(header: "OPENED"),
            .init(header: "AUDIENCE", alignment: .right), .init(header: "TOTAL", alignment: .right),
            .init(header: "SALES (KRW)", alignment: .right), .init(header: "SHARE", alignment: .right),
            .init(header: "SCREENS", alignment: .right), .init(header: "SHOWS", alignment: .right),
            .init(header: "TMDB", maxWidth: 36),
        ])
        for entry in self.entries {
            let change: String =
                if entry.isNew == true { "new" } else if let change = entry.rankChange, change != 0 {
                    change > 0 ? "+\(change)" : "\(change)"
                } else { "–" }
            table.append([
                "\(entry.rank)", change, entry.movieName ?? entry.movieCd ?? "–", entry.openDate ?? "–",
                TextFormat.grouped(entry.audienceCount), TextFormat.grouped(entry.audienceAccumulated),
                TextFormat.grouped(entry.salesAmount),
                entry.salesShare.map { TextFormat.decimal($0, digits: 1) + "%" } ?? "–",
                TextFormat.grouped(entry.screenCount), TextFormat.grouped(entry.showCount),
                entry.tmdbMovieID.map { id in "\(id)" + (entry.tmdbTitle.map { " \($0)" } ?? "") } ?? "",
            ])
        }
        let linked = self.entries.filter { $0.tmdbMovieID != nil }.count
        return [
            self.heading(latest: latest),
            table.render(),
            "\(TextFormat.count(self.entries.count, "entry", plural: "entries")), \(linked) linked to a TMDB movie",
        ].joined(separator: "\n")
    }

    /// `Weekend box office for 20240112 – 20240114 (week 202402)`: the kind of list, its days and week, and
    /// with `latest`, that it is the latest in the store.
    public func heading(latest: Bool) -> String {
        let range: String
        switch (self.showRangeStart, self.showRangeEnd) {
        case (let start?, let end?) where start == end: range = start
        case (let start?, let end?): range = "\(start) – \(end)"
        default: range = self.periodKey
        }
        let name: String
        switch self.period {
        case .daily: name = "Daily box office for \(range)"
        case .week: name = "Weekly box office for \(range) (week \(self.periodKey))"
        case .weekend: name = "Weekend box office for \(range) (week \(self.periodKey))"
        case .weekdays: name = "Weekdays box office for \(range) (week \(self.periodKey))"
        }
        return name + (latest ? ", the latest in the store" : "")
    }
}
