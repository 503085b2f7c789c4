/// Open Library: `search.json`, `works/{id}.json`, and the Covers API's images.
struct OpenLibrary: Sendable {
    let catalogue: Catalogue

    var books: BookCatalogue { self.catalogue.books }

    /// `search.json` (`q`, `page`, `limit`, `offset`, `fields`).
    func search(_ request: EmulatorRequest, index: [String]) -> EmulatorResponse {
        guard let q = request.query["q"], !q.trimmingSpaces.isEmpty else {
            return .json(.object([("error", .string("No query provided"))]), status: 422)
        }
        let limit = min(max(request.int("limit") ?? 100, 0), 1000)
        let page = max(request.int("page") ?? 1, 1)
        let start = request.int("offset") ?? (page - 1) * limit
        let tokens = q.lowercased().split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var matches: [Int] = []
        for (bookIndex, text) in index.enumerated() where tokens.allSatisfy({ text.contains($0) }) {
            matches.append(bookIndex)
        }
        let fields = request.query["fields"].map { Set($0.split(separator: ",").map(String.init)) }
        let slice = start < matches.count ? matches[start..<min(matches.count, start + limit)] : []
        let docs: [JSON] = slice.map { bookIndex in
            let document = self.document(self.books.book(bookIndex))
            guard let fields, !fields.contains("*") else { return document }
            guard case .object(let members) = document else { return document }
            return .object(members.filter { fields.contains($0.0) })
        }
        return .json(
            .object([
                ("numFound", .int(matches.count)),
                ("start", .int(start)),
                ("numFoundExact", .bool(true)),
                ("docs", .array(docs)),
                ("num_found", .int(matches.count)),
                ("q", .string(q)),
                ("offset", request.int("offset").map(JSON.int) ?? .null),
            ]),
            lastModified: self.catalogue.referenceDay.epochSeconds
        )
    }

    private func document(_ book: Book) -> JSON {
        var random = SeededRandom(self.catalogue.seed, 0xD0C, UInt64(book.index))
        var members: [(String, JSON)] = [
            ("key", .string("/works/\(book.workID)")),
            ("type", .string("work")),
            (
                "seed",
                JSON.strings(
                    ["/books/\(book.editionKey)", "/works/\(book.workID)"] + book.authorKeys.map { "/authors/\($0)" }
                )
            ),
            ("title", .string(book.title)),
            ("title_suggest", .string(book.title)),
            ("edition_count", .int(book.editionCount)),
            ("edition_key", JSON.strings([book.editionKey])),
        ]
        if let year = book.firstPublishYear {
            members.append(("publish_date", JSON.strings([String(year)])))
            members.append(("publish_year", .array([.int(year)])))
            members.append(("first_publish_year", .int(year)))
        }
        members.append(("number_of_pages_median", .int(random.int(90...900))))
        if !book.isbns.isEmpty { members.append(("isbn", JSON.strings(book.isbns))) }
        members += [
            ("last_modified_i", .int(book.lastModified)),
            ("ebook_count_i", .int(0)),
            ("ebook_access", .string("no_ebook")),
            ("has_fulltext", .bool(false)),
            ("public_scan_b", .bool(false)),
        ]
        if let cover = book.coverID {
            members.append(("cover_edition_key", .string(book.editionKey)))
            members.append(("cover_i", .int(cover)))
        }
        let publisher = "\(random.pick(TextGenerator.nouns)) Press"
        members.append(("publisher", JSON.strings([publisher])))
        members.append(("language", JSON.strings([book.language])))
        if !book.authorKeys.isEmpty {
            members.append(("author_key", JSON.strings(book.authorKeys)))
            members.append(("author_name", JSON.strings(book.authorNames)))
        }
        if !book.subjects.isEmpty { members.append(("subject", JSON.strings(book.subjects))) }
        members.append(("publisher_facet", JSON.strings([publisher])))
        members.append(("_version_", .int(1_700_000_000_000_000_000 + Int(random.next() % 100_000_000_000_000_000))))
        if !book.authorKeys.isEmpty {
            members.append(("author_facet", JSON.strings(zip(book.authorKeys, book.authorNames).map { "\($0) \($1)" })))
        }
        return .object(members)
    }

    /// `works/{id}.json`.
    func work(_ id: String) -> EmulatorResponse {
        guard id.hasPrefix("OL"), id.hasSuffix("W"), let number = Int(id.dropFirst(2).dropLast()),
            let index = self.books.works.index(number)
        else {
            return .json(.object([("error", .string("notfound")), ("key", .string("/works/\(id)"))]), status: 404)
        }
        let book = self.books.book(index)
        var random = SeededRandom(self.catalogue.seed, 0x3051, UInt64(index))
        var members: [(String, JSON)] = []
        switch random.int(0...2) {
        case 0: members.append(("description", .string(TextGenerator.englishOverview(&random))))
        case 1:
            members.append(
                (
                    "description",
                    .object([
                        ("type", .string("/type/text")), ("value", .string(TextGenerator.englishOverview(&random))),
                    ])
                )
            )
        default: break
        }
        members.append(("title", .string(book.title)))
        if let cover = book.coverID { members.append(("covers", .array([.int(cover)]))) }
        if !book.subjects.isEmpty { members.append(("subjects", JSON.strings(book.subjects))) }
        members.append(("key", .string("/works/\(book.workID)")))
        members.append(
            (
                "authors",
                .array(
                    book.authorKeys.map {
                        .object([
                            ("author", .object([("key", .string("/authors/\($0)"))])),
                            ("type", .object([("key", .string("/type/author_role"))])),
                        ])
                    }
                )
            )
        )
        if let year = book.firstPublishYear {
            members.append(
                (
                    "first_publish_date",
                    .string(random.chance(0.5) ? String(year) : "\(random.pick(Self.months)) \(year)")
                )
            )
        }
        members.append(("type", .object([("key", .string("/type/work"))])))
        let revision = random.int(1...12)
        members.append(("latest_revision", .int(revision)))
        members.append(("revision", .int(revision)))
        func datetime(_ seconds: Int) -> JSON {
            let day = Day(seconds / 86400)
            let second = seconds % 86400
            let value =
                "\(day.iso)T\(Day.pad(second / 3600, 2)):\(Day.pad(second / 60 % 60, 2)):\(Day.pad(second % 60, 2)).\(Day.pad(random.int(0...999_999), 6))"
            return .object([("type", .string("/type/datetime")), ("value", .string(value))])
        }
        members.append(("created", datetime(book.lastModified - random.int(0...300_000_000))))
        members.append(("last_modified", datetime(book.lastModified)))
        return .json(.object(members), lastModified: book.lastModified)
    }

    private static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    /// `{value}-{S|M|L}.jpg` → `value` and the size letter; nil when the name is not of that shape.
    static func coverName(_ name: Substring) -> (value: String, size: Substring)? {
        guard name.hasSuffix(".jpg") else { return nil }
        let stem = name.dropLast(4)
        guard let dash = stem.lastIndex(of: "-") else { return nil }
        return (String(stem[..<dash]), stem[stem.index(after: dash)...])
    }

    /// The value a cover's file name names, whatever its size (`123-L.jpg` → `123`): what ``ImageRevisions``
    /// calls it by.
    static func coverValue(_ name: String) -> String { Self.coverName(Substring(name))?.value ?? name }

    /// `/b/{id|isbn|olid}/{value}-{S|M|L}.jpg` → the cover to render, or nil for an unknown cover.
    func cover(kind: Substring, name: Substring) -> ImageSpec? {
        guard let parsed = Self.coverName(name) else { return nil }
        let (value, size) = (parsed.value, parsed.size)
        let width: Int
        switch size {
        case "S": width = 45
        case "M": width = 180
        case "L": width = 500
        default: return nil
        }
        let index: Int?
        switch kind {
        case "id": index = Int(value).flatMap { self.books.covers.index($0) }
        case "isbn": index = self.books.index(isbn: value)
        case "olid":
            index =
                value.hasPrefix("OL") && value.hasSuffix("M")
                ? Int(value.dropFirst(2).dropLast()).flatMap { self.books.editions.index($0) } : nil
        default: index = nil
        }
        guard let index else { return nil }
        let book = self.books.book(index)
        guard book.coverID != nil else { return nil }
        let ratio = 140 + Int(StableHash.combine(self.catalogue.seed, 0xA5, UInt64(index)) % 20)  // height/width %
        return ImageSpec(
            seed: StableHash.combine(self.catalogue.seed, 0xC0BE, UInt64(index)),
            width: width,
            height: width * ratio / 100,
            format: book.isPNGCover ? .png : .jpeg,
            orientation: 1,
            quality: 85
        )
    }
}
