/// One movie with everything TMDB shows about it, generated from its own random stream.
struct Movie: Sendable {
    let core: MovieCore
    let index: Int
    let seed: UInt64

    let titles: [Language: String]
    let originalTitle: String
    /// Languages whose overview is missing (TMDB answers `""`).
    let missingOverview: Set<Language>
    let genreIDs: [Int]
    let posterPath: String?
    let backdropPath: String?
    let reviewCount: Int
    /// Extra posters beyond the main one (for `append_to_response=images`).
    let extraPosters: Int
    let lastModified: Int

    var id: Int { self.core.id }

    init(seed: UInt64, core: MovieCore, index: Int) {
        self.core = core
        self.index = index
        self.seed = seed
        var random = SeededRandom(seed, 0x7171E, UInt64(index))
        var english = SeededRandom(seed, 0xE1, UInt64(index))
        var korean = SeededRandom(seed, 0xC0, UInt64(index))
        var japanese = SeededRandom(seed, 0x7A, UInt64(index))
        var other = SeededRandom(seed, 0x07, UInt64(index))
        let titles: [Language: String] = [
            .en: TextGenerator.englishTitle(&english),
            .ko: TextGenerator.koreanTitle(&korean),
            .ja: TextGenerator.japaneseTitle(&japanese),
        ]
        self.titles = titles
        switch core.originalLanguage {
        case "en": self.originalTitle = titles[.en]!
        case "ko": self.originalTitle = titles[.ko]!
        case "ja": self.originalTitle = titles[.ja]!
        case "zh": self.originalTitle = TextGenerator.kanjiWord(&other) + TextGenerator.kanjiWord(&other)
        default: self.originalTitle = TextGenerator.latinTitle(&other)
        }
        var missing: Set<Language> = []
        if random.chance(0.08) { missing.insert(.ko) }
        if random.chance(0.08) { missing.insert(.ja) }
        if random.chance(0.03) { missing.insert(.en) }
        self.missingOverview = missing
        var genres: [Int] = []
        for _ in 0..<random.int(1...3) {
            let genre = random.pick(Genres.all).id
            if !genres.contains(genre) { genres.append(genre) }
        }
        self.genreIDs = genres
        self.posterPath =
            random.chance(0.9) ? ImagePathCodec.encode(seed: seed, kind: .poster, index: index, variant: 0) : nil
        self.backdropPath =
            random.chance(0.8) ? ImagePathCodec.encode(seed: seed, kind: .backdrop, index: index, variant: 0) : nil
        self.reviewCount = random.chance(0.35) ? 0 : random.int(1...(random.chance(0.1) ? 45 : 8))
        self.extraPosters = self.posterPath == nil ? 0 : random.int(0...3)
        // Fixed per entity: some day in the five years before the reference day, at some second of it.
        let reference = Day(year: 2024, month: 1, day: 1).adding(Int(StableHash.combine(seed, 0xDA7E) % 366))
        self.lastModified = reference.adding(-random.int(1...1800)).epochSeconds + random.int(0...86399)
    }

    /// The title in `language`.
    func title(_ language: Language) -> String { self.titles[language] ?? self.originalTitle }

    /// The overview in `language` (`""` where TMDB has no translation).
    func overview(_ language: Language) -> String {
        if self.missingOverview.contains(language) { return "" }
        var random = SeededRandom(self.seed, 0x0F, UInt64(language.hashSalt), UInt64(self.index))
        switch language {
        case .en: return TextGenerator.englishOverview(&random)
        case .ko: return TextGenerator.koreanOverview(&random)
        case .ja: return TextGenerator.japaneseOverview(&random)
        }
    }

    /// Lower-cased titles in every language, for substring search.
    var searchText: String {
        [self.titles[.en]!, self.titles[.ko]!, self.titles[.ja]!, self.originalTitle].joined(separator: "\u{1}")
            .lowercased()
    }

    /// `vote_average`: one decimal, an integer when the decimal is zero (as TMDB serializes `6`).
    var voteAverageJSON: JSON {
        let value = self.core.voteAverage
        return value % 10 == 0 ? .int(value / 10) : .double(Double(value) / 10)
    }

    /// A list entry (now_playing, popular, top_rated, upcoming, search).
    func listEntry(_ language: Language) -> JSON {
        var members: [(String, JSON)] = [
            ("adult", .bool(self.core.isAdult)),
            ("backdrop_path", .optional(self.backdropPath)),
            ("genre_ids", .array(self.genreIDs.map(JSON.int))),
            ("id", .int(self.id)),
            ("original_language", .string(self.core.originalLanguage)),
            ("original_title", .string(self.originalTitle)),
            ("overview", .string(self.overview(language))),
            ("popularity", .double(self.core.popularity)),
            ("poster_path", .optional(self.posterPath)),
        ]
        // TMDB leaves the key out entirely for an undated movie in lists.
        if let release = self.core.release { members.append(("release_date", .string(release.iso))) }
        members += [
            ("title", .string(self.title(language))),
            ("video", .bool(false)),
            ("vote_average", self.voteAverageJSON),
            ("vote_count", .int(self.core.voteCount)),
        ]
        return .object(members)
    }
}

extension Language {
    var hashSalt: Int {
        switch self {
        case .en: 1
        case .ko: 2
        case .ja: 3
        }
    }
}
