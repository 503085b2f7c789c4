import Foundation
import MarqueeCore

// The read models of `marquee query books` (Store's queries in StoreQueries.swift). Codable with snake_case keys,
// part of docs/query.md's contract.

/// A book found by ``Store/books(titleContaining:author:limit:)``.
public struct BookSummary: Codable, Hashable, Sendable {
    /// `openlibrary:work:<OL…W>` or `openlibrary:edition:<OL…M>`.
    public var bookKey: String
    @ExplicitNull public var workID: String?
    @ExplicitNull public var editionID: String?
    @ExplicitNull public var title: String?
    /// In Open Library's order.
    public var authors: [BookAuthor]
    @ExplicitNull public var firstPublishYear: Int?
    @ExplicitNull public var editionCount: Int?
    /// Open Library's cover id.
    @ExplicitNull public var coverID: Int64?
    /// The stored cover and its variants, if the image worker stored one.
    @ExplicitNull public var cover: StoredImage?

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

}

/// An author of a book, as the search answer named them.
public struct BookAuthor: Codable, Hashable, Sendable {
    @ExplicitNull public var name: String?
    /// `OL…A`.
    @ExplicitNull public var authorKey: String?

    enum CodingKeys: String, CodingKey {
        case name
        case authorKey = "author_key"
    }

}
