/// Generates titles, overviews and names in English, Korean (Hangul from the syllable tables) and Japanese
/// (katakana and common kanji), deterministically from a ``SeededRandom``.
enum TextGenerator {
    // MARK: - English

    static let adjectives = [
        "Silent", "Last", "Crimson", "Hidden", "Broken", "Golden", "Distant", "Midnight", "Frozen", "Wild",
        "Burning", "Lost", "Secret", "Endless", "Little", "Iron", "Blue", "Quiet", "Fallen", "Electric",
        "Savage", "Gentle", "Hollow", "Velvet", "Bright", "Dark", "Eternal", "Restless", "Lonely", "Northern",
    ]
    static let nouns = [
        "River", "City", "Garden", "Storm", "Kingdom", "Harbor", "Mirror", "Road", "Summer", "Winter",
        "Station", "Island", "Promise", "Letter", "Empire", "Forest", "Night", "Shadow", "Horizon", "Dream",
        "Machine", "Detective", "Daughter", "Stranger", "Voyage", "Castle", "Signal", "Border", "Orchard", "Tide",
    ]
    static let verbs = [
        "escape", "find", "protect", "uncover", "survive", "outrun", "rebuild", "confront", "rescue", "betray",
        "forgive", "remember", "chase", "defend", "reclaim",
    ]
    static let people = [
        "a retired detective", "two estranged sisters", "a young pilot", "a small-town teacher", "an exiled prince",
        "a reluctant hacker", "a family of farmers", "a grieving father", "a rookie reporter", "an ageing boxer",
    ]

    static func englishTitle(_ random: inout SeededRandom) -> String {
        switch random.int(0...5) {
        case 0: return "The \(random.pick(adjectives)) \(random.pick(nouns))"
        case 1: return "\(random.pick(nouns)) of the \(random.pick(nouns))"
        case 2: return "\(random.pick(adjectives)) \(random.pick(nouns))"
        case 3: return "The \(random.pick(nouns))"
        case 4: return "\(random.pick(adjectives)) \(random.pick(nouns)) \(random.int(2...4))"
        default: return "\(random.pick(nouns)): \(random.pick(adjectives)) \(random.pick(nouns))"
        }
    }

    static func englishOverview(_ random: inout SeededRandom) -> String {
        var sentences: [String] = []
        for _ in 0..<random.int(2...4) {
            let adjective = random.pick(adjectives).lowercased()
            let noun = random.pick(nouns).lowercased()
            sentences.append(
                "When \(random.pick(people)) \(random.pick(verbs))s the \(adjective) \(noun), "
                    + "\(random.pick(people)) must \(random.pick(verbs)) what is left of the "
                    + "\(random.pick(nouns).lowercased()) before the \(random.pick(nouns).lowercased()) falls."
            )
        }
        return sentences.joined(separator: " ")
    }

    static let firstNames = [
        "James", "Mary", "Robert", "Linda", "Michael", "Sarah", "David", "Emma", "Daniel", "Olivia", "Thomas", "Grace",
        "Henry", "Alice", "Samuel", "Clara",
    ]
    static let lastNames = [
        "Walker", "Hughes", "Bennett", "Carter", "Foster", "Hayes", "Morgan", "Reed", "Sullivan", "Ward", "Fleming",
        "Porter", "Lambert", "Grant", "Doyle", "Shaw",
    ]

    static func englishName(_ random: inout SeededRandom) -> String {
        "\(random.pick(firstNames)) \(random.pick(lastNames))"
    }

    // MARK: - Korean (Hangul syllables: initial × medial × final)

    /// Initial consonant indices that read naturally (ㄱ ㄴ ㄷ ㄹ ㅁ ㅂ ㅅ ㅇ ㅈ ㅊ ㅋ ㅌ ㅍ ㅎ).
    private static let koreanInitials = [0, 2, 3, 5, 6, 7, 9, 11, 12, 14, 15, 16, 17, 18]
    /// Medial vowel indices (ㅏ ㅐ ㅓ ㅔ ㅗ ㅜ ㅡ ㅣ ㅕ ㅛ ㅠ ㅘ).
    private static let koreanMedials = [0, 1, 4, 5, 8, 13, 18, 20, 6, 12, 17, 9]
    /// Final consonant indices (none, ㄱ ㄴ ㄹ ㅁ ㅂ ㅇ).
    private static let koreanFinals = [0, 0, 0, 1, 4, 8, 16, 17, 21]

    static func koreanSyllable(_ random: inout SeededRandom) -> Character {
        let initial = random.pick(koreanInitials)
        let medial = random.pick(koreanMedials)
        let final = random.pick(koreanFinals)
        let scalar = Unicode.Scalar(0xAC00 + (initial * 21 + medial) * 28 + final)!
        return Character(scalar)
    }

    static func koreanWord(_ random: inout SeededRandom, syllables: ClosedRange<Int> = 2...3) -> String {
        String((0..<random.int(syllables)).map { _ in koreanSyllable(&random) })
    }

    static func koreanTitle(_ random: inout SeededRandom) -> String {
        switch random.int(0...3) {
        case 0: return koreanWord(&random)
        case 1: return "\(koreanWord(&random)) \(koreanWord(&random))"
        case 2: return "\(koreanWord(&random))의 \(koreanWord(&random))"
        default: return "\(koreanWord(&random)): \(koreanWord(&random)) \(koreanWord(&random, syllables: 1...2))"
        }
    }

    private static let koreanEndings = ["한다.", "이었다.", "하게 된다.", "을 찾는다.", "에 나선다."]

    static func koreanOverview(_ random: inout SeededRandom) -> String {
        (0..<random.int(2...4)).map { _ in
            let words = (0..<random.int(3...6)).map { _ in koreanWord(&random) }.joined(separator: " ")
            return "\(words)\(random.pick(koreanEndings))"
        }.joined(separator: " ")
    }

    private static let koreanSurnames = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오"]

    static func koreanName(_ random: inout SeededRandom) -> String {
        random.pick(koreanSurnames) + String((0..<2).map { _ in koreanSyllable(&random) })
    }

    // MARK: - Japanese (katakana words, common kanji, の)

    private static let katakana: [String] = [
        "ア", "イ", "ウ", "エ", "オ", "カ", "キ", "ク", "ケ", "コ", "サ", "シ", "ス", "セ", "ソ", "タ", "チ", "ツ",
        "テ", "ト", "ナ", "ニ", "ヌ", "ネ", "ノ", "ハ", "ヒ", "フ", "ヘ", "ホ", "マ", "ミ", "ム", "メ", "モ", "ヤ",
        "ユ", "ヨ", "ラ", "リ", "ル", "レ", "ロ", "ワ", "ン", "ガ", "ギ", "グ", "ド", "バ", "ビ", "ブ", "パ", "ー",
    ]
    private static let kanji: [String] = [
        "空", "海", "夜", "星", "花", "風", "雪", "月", "光", "影", "夢", "愛", "心", "道", "街", "森", "川", "火",
        "王", "国", "時", "命", "声", "剣", "鳥", "春", "夏", "秋", "冬", "青", "赤", "白", "黒", "恋", "君", "約束",
    ]

    static func katakanaWord(_ random: inout SeededRandom) -> String {
        (0..<random.int(3...5)).map { _ in random.pick(katakana) }.joined()
    }

    static func kanjiWord(_ random: inout SeededRandom) -> String {
        (0..<random.int(1...2)).map { _ in random.pick(kanji) }.joined()
    }

    static func japaneseTitle(_ random: inout SeededRandom) -> String {
        switch random.int(0...3) {
        case 0: return "\(kanjiWord(&random))の\(kanjiWord(&random))"
        case 1: return katakanaWord(&random)
        case 2: return "\(katakanaWord(&random))：\(kanjiWord(&random))の\(katakanaWord(&random))"
        default: return "\(kanjiWord(&random))と\(kanjiWord(&random))"
        }
    }

    private static let japaneseEndings = ["を探す。", "に立ち向かう。", "を守る。", "の物語。", "が始まる。"]

    static func japaneseOverview(_ random: inout SeededRandom) -> String {
        (0..<random.int(2...4)).map { _ in
            "\(kanjiWord(&random))の\(katakanaWord(&random))は、\(kanjiWord(&random))と\(kanjiWord(&random))"
                + random.pick(japaneseEndings)
        }.joined()
    }

    // MARK: - Other original languages (Latin letters)

    private static let latinSyllables = [
        "la", "ma", "ri", "do", "sol", "ve", "na", "to", "ber", "gi", "lu", "ra", "mon", "de", "sa", "vi", "el",
        "an", "co", "pe",
    ]

    static func latinTitle(_ random: inout SeededRandom) -> String {
        (0..<random.int(1...3)).map { _ in
            let word = (0..<random.int(2...3)).map { _ in random.pick(latinSyllables) }.joined()
            return word.prefix(1).uppercased() + word.dropFirst()
        }.joined(separator: " ")
    }
}
