public import MarqueeStore

// MARK: - BookSummary + text for people

extension BookSummary {
    /// `'hobbit' in the title and 'tolkien' in an author's name`: what a book search looked for, for its lines.
    public static func criteria(title: String?, author: String?) -> String {
        [title.map { "'\($0)' in the title" }, author.map { "'\($0)' in an author's name" }]
            .compactMap { $0 }.joined(separator: " and ")
    }

    /// What `marquee query books` prints: a table of the books (TITLE, AUTHORS, FIRST, EDITIONS, COVER, KEY) and a
    /// line saying how many, and whether `--limit` cut the list.
    ///
    /// - Parameters:
    ///   - books: The books found, most editions first (at least one).
    ///   - criteria: What was looked for (``criteria(title:author:)``).
    ///   - limit: The most books asked for.
    public static func text(_ books: [BookSummary], criteria: String, limit: Int) -> String {
        var table = TextTable([
            .init(header: "TITLE", maxWidth: 50), .init(header: "AUTHORS", maxWidth: 36),
            .init(header: "FIRST", alignment: .right), .init(header: "EDITIONS", alignment: .right),
            .init(header: "COVER"), .init(header: "KEY"),
        ])
        for book in books {
            let cover =
                book.cover.map { "stored, \(TextFormat.count($0.variants.count, "variant"))" }
                ?? book.coverID.map { "id \($0)" } ?? "–"
            table.append([
                book.title ?? "–", book.authors.compactMap(\.name).joined(separator: ", "),
                book.firstPublishYear.map { "\($0)" } ?? "–", TextFormat.grouped(book.editionCount), cover,
                book.bookKey,
            ])
        }
        let more = books.count == limit ? " (the first \(limit): --limit shows more)" : ""
        return table.render() + "\n"
            + "\(TextFormat.count(books.count, "book")) with \(criteria), most editions first\(more)"
    }
}
