import Foundation
import MarqueeCore

// The read models of `marquee query books` (Store's queries in StoreQueries.swift). Codable with snake_case keys,
// part of docs/query.md's contract.

/// A book found by ``Store/books(titleContaining:author:limit:)``.
public struct BookSummary: Codable, Hashable, Sendable {
    /// `openlibrary:work:<OL…W>` or `openlibrary:edition:<OL…M>`.
    public var bookKey: String
    public var workID: String?
    public var editionID: String?
    public var title: String?
    /// In Open Library's order.
    public var authors: [BookAuthor]
    public var firstPublishYear: Int?
    public var editionCount: Int?
    /// Open Library's cover id.
    public var coverID: Int64?
    /// The stored cover and its variants, if the image worker stored one.
    public var cover: StoredImage?

    enum CodingKeys: String, CodingKey {
        case bookKey = "book_key"
        case workID = "work_id"
        case editionID = "edition_id"
        case title, authors
        case firstPublishYear = "first_publish_year"
        case editionCount = "edition_count"
        case coverID = "cover_id"
        case cover
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.bookKey, forKey: .bookKey)
        try container.encode(self.workID, forKey: .workID)
        try container.encode(self.editionID, forKey: .editionID)
        try container.encode(self.title, forKey: .title)
        try container.encode(self.authors, forKey: .authors)
        try container.encode(self.firstPublishYear, forKey: .firstPublishYear)
        try container.encode(self.editionCount, forKey: .editionCount)
        try container.encode(self.coverID, forKey: .coverID)
        try container.encode(self.cover, forKey: .cover)
    }
}

/// An author of a book, as the search answer named them.
public struct BookAuthor: Codable, Hashable, Sendable {
    public var name: String?
    /// `OL…A`.
    public var authorKey: String?

    enum CodingKeys: String, CodingKey {
        case name
        case authorKey = "author_key"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.name, forKey: .name)
        try container.encode(self.authorKey, forKey: .authorKey)
    }
}
