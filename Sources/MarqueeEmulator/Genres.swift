/// TMDB's 19 movie genres with their English, Korean and Japanese names (as TMDB serves them).
enum Genres {
    struct Genre: Sendable {
        let id: Int
        let en: String
        let ko: String
        let ja: String
        /// KOFIC's genre name (`genreNm`, `repGenreNm`).
        let kofic: String
    }

    static let all: [Genre] = [
        Genre(id: 28, en: "Action", ko: "액션", ja: "アクション", kofic: "액션"),
        Genre(id: 12, en: "Adventure", ko: "모험", ja: "アドベンチャー", kofic: "어드벤처"),
        Genre(id: 16, en: "Animation", ko: "애니메이션", ja: "アニメーション", kofic: "애니메이션"),
        Genre(id: 35, en: "Comedy", ko: "코미디", ja: "コメディ", kofic: "코미디"),
        Genre(id: 80, en: "Crime", ko: "범죄", ja: "犯罪", kofic: "범죄"),
        Genre(id: 99, en: "Documentary", ko: "다큐멘터리", ja: "ドキュメンタリー", kofic: "다큐멘터리"),
        Genre(id: 18, en: "Drama", ko: "드라마", ja: "ドラマ", kofic: "드라마"),
        Genre(id: 10751, en: "Family", ko: "가족", ja: "ファミリー", kofic: "가족"),
        Genre(id: 14, en: "Fantasy", ko: "판타지", ja: "ファンタジー", kofic: "판타지"),
        Genre(id: 36, en: "History", ko: "역사", ja: "履歴", kofic: "사극"),
        Genre(id: 27, en: "Horror", ko: "공포", ja: "ホラー", kofic: "공포(호러)"),
        Genre(id: 10402, en: "Music", ko: "음악", ja: "音楽", kofic: "뮤지컬"),
        Genre(id: 9648, en: "Mystery", ko: "미스터리", ja: "謎", kofic: "미스터리"),
        Genre(id: 10749, en: "Romance", ko: "로맨스", ja: "ロマンス", kofic: "멜로/로맨스"),
        Genre(id: 878, en: "Science Fiction", ko: "SF", ja: "サイエンスフィクション", kofic: "SF"),
        Genre(id: 10770, en: "TV Movie", ko: "TV 영화", ja: "テレビ映画", kofic: "기타"),
        Genre(id: 53, en: "Thriller", ko: "스릴러", ja: "スリラー", kofic: "스릴러"),
        Genre(id: 10752, en: "War", ko: "전쟁", ja: "戦争", kofic: "전쟁"),
        Genre(id: 37, en: "Western", ko: "서부", ja: "西洋", kofic: "서부극(웨스턴)"),
    ]

    static func name(_ genre: Genre, language: Language) -> String {
        switch language {
        case .ko: genre.ko
        case .ja: genre.ja
        case .en: genre.en
        }
    }
}

/// The languages the emulator has text for; any other `language` parameter falls back to English.
public enum Language: String, Sendable, CaseIterable {
    case en, ko, ja

    /// The language of a TMDB `language` parameter (`ko-KR`, `ja`, `en-US` …); English for anything else.
    public init(parameter: String?) {
        let code = parameter?.prefix(2).lowercased() ?? "en"
        self = Language(rawValue: code) ?? .en
    }
}
