/// Open Library's part of the catalogue: works, their authors, editions, ISBNs and covers.
struct BookCatalogue: Sendable {
    let seed: UInt64
    let count: Int
    let works: SparseID
    let authors: SparseID
    let editions: SparseID
    let covers: SparseID
    let authorCount: Int

    init(seed: UInt64, count: Int) {
        self.seed = seed
        self.count = count
        self.authorCount = max(5, count / 3)
        self.works = SparseID(seed: seed, salt: 0xB00C, base: 1_000_000, step: 29, count: count)
        self.authors = SparseID(seed: seed, salt: 0xA07, base: 100_000, step: 17, count: self.authorCount)
        self.editions = SparseID(seed: seed, salt: 0xED1, base: 5_000_000, step: 31, count: count)
        self.covers = SparseID(seed: seed, salt: 0xC0E, base: 6_000_000, step: 7, count: count)
    }

    /// The 9-digit ISBN body of a book (shared by its ISBN-10 and ISBN-13).
    func isbnBody(_ index: Int) -> Int {
        100_000_000 + index * 37 + Int(StableHash.combine(self.seed, 0x15B, UInt64(index)) % 37)
    }

    /// The book whose ISBN-10 or ISBN-13 is `isbn` (hyphens ignored).
    func index(isbn: String) -> Int? {
        let digits = isbn.filter { $0 != "-" }
        let body: Substring
        if digits.count == 13, digits.hasPrefix("978") {
            body = digits.dropFirst(3).prefix(9)
        } else if digits.count == 10 {
            body = digits.prefix(9)
        } else {
            return nil
        }
        guard let number = Int(body), number >= 100_000_000 else { return nil }
        let index = (number - 100_000_000) / 37
        guard index < self.count, self.isbnBody(index) == number else { return nil }
        let book = self.book(index)
        return book.isbns.contains(digits) ? index : nil
    }

    func book(_ index: Int) -> Book { Book(catalogue: self, index: index) }

    func authorName(_ authorIndex: Int) -> String {
        var random = SeededRandom(self.seed, 0xA07A, UInt64(authorIndex))
        switch authorIndex % 10 {
        case 0: return TextGenerator.koreanName(&random)
        case 1: return TextGenerator.kanjiWord(&random) + TextGenerator.kanjiWord(&random)
        default: return TextGenerator.englishName(&random)
        }
    }
}

/// One work with its search-document and work-page fields.
struct Book: Sendable {
    let index: Int
    let workID: String
    let title: String
    let authorIndices: [Int]
    let authorKeys: [String]
    let authorNames: [String]
    let firstPublishYear: Int?
    let coverID: Int?
    let editionKey: String
    let editionCount: Int
    let isbns: [String]
    let language: String
    let subjects: [String]
    let isPNGCover: Bool
    let lastModified: Int

    init(catalogue: BookCatalogue, index: Int) {
        var random = SeededRandom(catalogue.seed, 0xB0_0C5, UInt64(index))
        self.index = index
        self.workID = "OL\(catalogue.works.id(index))W"
        switch random.int(0...9) {
        case 0:
            self.language = "kor"
            self.title = TextGenerator.koreanTitle(&random)
        case 1:
            self.language = "jpn"
            self.title = TextGenerator.japaneseTitle(&random)
        default:
            self.language = "eng"
            self.title = TextGenerator.englishTitle(&random)
        }
        let authors =
            random.chance(0.05) ? [] : (0..<random.int(1...2)).map { _ in random.int(0...(catalogue.authorCount - 1)) }
        self.authorIndices = authors
        self.authorKeys = authors.map { "OL\(catalogue.authors.id($0))A" }
        self.authorNames = authors.map { catalogue.authorName($0) }
        self.firstPublishYear = random.chance(0.04) ? nil : random.int(1850...2023)
        self.coverID = random.chance(0.3) ? nil : catalogue.covers.id(index)
        self.editionKey = "OL\(catalogue.editions.id(index))M"
        self.editionCount = random.int(1...60)
        let body = catalogue.isbnBody(index)
        let body9 = String(body)
        let isbn10 = body9 + Self.isbn10Check(body9)
        let isbn13Body = "978" + body9
        let isbn13 = isbn13Body + Self.isbn13Check(isbn13Body)
        self.isbns = random.chance(0.1) ? [] : [isbn10, isbn13]
        var subjects: [String] = []
        for _ in 0..<random.int(0...4) {
            let subject = random.pick(Genres.all).en
            if !subjects.contains(subject) { subjects.append(subject) }
        }
        self.subjects = subjects
        self.isPNGCover = random.chance(0.125)
        self.lastModified = 1_600_000_000 + random.int(0...100_000_000)
    }

    static func isbn10Check(_ body: String) -> String {
        let sum = body.compactMap(\.wholeNumberValue).enumerated().reduce(0) { $0 + $1.element * (10 - $1.offset) }
        let check = (11 - sum % 11) % 11
        return check == 10 ? "X" : String(check)
    }

    static func isbn13Check(_ body: String) -> String {
        let sum = body.compactMap(\.wholeNumberValue).enumerated().reduce(0) {
            $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3)
        }
        return String((10 - sum % 10) % 10)
    }

    var searchText: String { ([self.title] + self.authorNames).joined(separator: "\u{1}").lowercased() }
}
