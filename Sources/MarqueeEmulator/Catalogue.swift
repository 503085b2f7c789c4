import Synchronization

import func Foundation.exp
import func Foundation.log10

/// How big a catalogue to generate, and from which seed.
public struct CatalogueConfiguration: Sendable, Equatable {
    /// Everything is derived from this: the same seed gives byte-identical responses.
    public var seed: UInt64
    /// Number of movies (10 … 100,000).
    public var movies: Int
    /// Number of books (10 … 100,000).
    public var books: Int

    /// A configuration; counts are clamped to 10 … 100,000.
    public init(seed: UInt64, movies: Int = 1000, books: Int = 500) {
        self.seed = seed
        self.movies = min(max(movies, 10), 100_000)
        self.books = min(max(books, 10), 100_000)
    }
}

/// The deterministic catalogue behind every upstream: movies (TMDB), their Korean box office (KOFIC), image
/// search results (Kakao) and books (Open Library).
///
/// Only the numeric fields every list needs (popularity, votes, release day) are generated up front; titles,
/// overviews, reviews and details are generated per request from the movie's own random stream, so 100,000
/// movies start in well under a second.
public final class Catalogue: Sendable {
    /// The configuration it was generated from.
    public let configuration: CatalogueConfiguration
    /// The day the lists are relative to ("today" for now_playing/upcoming), fixed by the seed.
    public let referenceDay: Day

    let seed: UInt64
    let movieIDs: SparseID
    let cores: [MovieCore]
    /// Movie indices by popularity, descending (adult excluded).
    let byPopularity: [Int32]
    /// Movie indices by vote average then vote count, descending (at least 10 votes, adult excluded).
    let byRating: [Int32]
    /// Dated movie indices by release day, ascending (adult excluded).
    let byRelease: [Int32]
    /// KOFIC's part of the catalogue.
    let kofic: KoficPool
    /// Books.
    let books: BookCatalogue

    private let searchIndex = Mutex<[String]?>(nil)
    private let bookIndex = Mutex<[String]?>(nil)

    /// Languages a movie can be originally in, with their weights.
    static let originalLanguages: [(code: String, weight: Double)] = [
        ("en", 0.42), ("ko", 0.22), ("ja", 0.14), ("fr", 0.05), ("es", 0.04), ("hi", 0.03), ("it", 0.03),
        ("zh", 0.04), ("de", 0.03),
    ]

    /// Generates the catalogue.
    public init(_ configuration: CatalogueConfiguration) {
        self.configuration = configuration
        let seed = configuration.seed
        self.seed = seed
        self.referenceDay = Day(year: 2024, month: 1, day: 1).adding(Int(StableHash.combine(seed, 0xDA7E) % 366))
        self.movieIDs = SparseID(seed: seed, salt: 0x7D3B, base: 11, step: 13, count: configuration.movies)
        var cores: [MovieCore] = []
        cores.reserveCapacity(configuration.movies)
        for index in 0..<configuration.movies {
            cores.append(MovieCore(seed: seed, index: index, id: self.movieIDs.id(index), reference: self.referenceDay))
        }
        self.cores = cores
        let visible = (0..<Int32(cores.count)).filter { !cores[Int($0)].isAdult }
        self.byPopularity = visible.sorted { cores[Int($0)].popularity > cores[Int($1)].popularity }
        self.byRating = visible.filter { cores[Int($0)].voteCount >= 10 }.sorted {
            let a = cores[Int($0)]
            let b = cores[Int($1)]
            return a.voteAverage != b.voteAverage ? a.voteAverage > b.voteAverage : a.voteCount > b.voteCount
        }
        self.byRelease = visible.filter { cores[Int($0)].release != nil }.sorted {
            cores[Int($0)].release!.value < cores[Int($1)].release!.value
        }
        self.kofic = KoficPool(seed: seed, cores: cores, byRelease: self.byRelease)
        self.books = BookCatalogue(seed: seed, count: configuration.books)
    }

    /// Number of movies.
    public var movieCount: Int { self.cores.count }

    /// The TMDB id of the movie at `index`.
    public func movieID(at index: Int) -> Int { self.cores[index].id }

    /// The index of the movie with TMDB id `id`, if it exists.
    public func movieIndex(id: Int) -> Int? { self.movieIDs.index(id) }

    /// The full movie at `index`.
    func movie(at index: Int) -> Movie { Movie(seed: self.seed, core: self.cores[index], index: index) }

    /// Lower-cased title and author names of every book, built on first use.
    func bookSearchIndex() -> [String] {
        self.bookIndex.withLock { index in
            if let index { return index }
            let built = (0..<self.books.count).map { self.books.book($0).searchText }
            index = built
            return built
        }
    }

    /// Indices of movies whose title in any language contains `query` (case-insensitive), by popularity.
    func searchMovies(_ query: String, year: Int?, includeAdult: Bool) -> [Int] {
        let needle = query.lowercased()
        let index = self.searchIndex.withLock { index in
            if let index { return index }
            let built = (0..<self.cores.count).map { self.movie(at: $0).searchText }
            index = built
            return built
        }
        var matches: [Int] = []
        for (movieIndex, text) in index.enumerated() where text.contains(needle) {
            let core = self.cores[movieIndex]
            if core.isAdult && !includeAdult { continue }
            if let year, core.release?.year != year { continue }
            matches.append(movieIndex)
        }
        return matches.sorted { self.cores[$0].popularity > self.cores[$1].popularity }
    }
}

/// The numeric fields of a movie, generated for every movie at start.
struct MovieCore: Sendable {
    let index: Int
    let id: Int
    let languageIndex: Int
    let popularity: Double
    /// Vote average × 10 (one decimal in the output).
    let voteAverage: Int
    let voteCount: Int
    let release: Day?
    let isAdult: Bool

    var originalLanguage: String { Catalogue.originalLanguages[self.languageIndex].code }

    init(seed: UInt64, index: Int, id: Int, reference: Day) {
        var random = SeededRandom(seed, 0xC0DE, UInt64(index))
        self.index = index
        self.id = id
        var pick = random.unit()
        var languageIndex = 0
        for (offset, language) in Catalogue.originalLanguages.enumerated() {
            if pick < language.weight {
                languageIndex = offset
                break
            }
            pick -= language.weight
            languageIndex = offset
        }
        self.languageIndex = languageIndex
        // Release: 2 % undated, 5 % upcoming (within 6 months), the rest skewed towards recent years.
        let when = random.unit()
        let age: Int
        if when < 0.02 {
            self.release = nil
            age = 0
        } else if when < 0.07 {
            let ahead = random.int(1...180)
            self.release = reference.adding(ahead)
            age = -ahead
        } else {
            let u = random.unit()
            age = Int(u * u * 50 * 365)
            self.release = reference.adding(-age)
        }
        self.isAdult = random.chance(0.01)
        let recency = age <= 0 ? 3.0 : max(0.3, 3.0 - log10(Double(age) + 1))
        let heat = exp(random.unit() * 4)  // 1 … 55
        self.popularity = (heat * recency * 30 * 1000).rounded() / 1000
        if age < 0 {
            self.voteCount = random.chance(0.7) ? 0 : random.int(1...9)
        } else {
            self.voteCount = Int(heat * heat * Double(random.int(1...40)) * min(1, Double(age + 30) / 400))
        }
        self.voteAverage = self.voteCount == 0 ? 0 : random.int(25...88)
    }
}
