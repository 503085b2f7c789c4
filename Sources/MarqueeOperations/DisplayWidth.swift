/// How many terminal columns text takes: East Asian Wide and Fullwidth characters (Hangul, kana, CJK
/// ideographs, full-width forms) and emoji take two, combining marks and format characters none, the rest one.
public enum DisplayWidth {
    /// The terminal columns of `text`.
    public static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + self.of($1) }
    }

    /// The terminal columns of one character: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) {
            return 2
        }
        return self.wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// East Asian Width W and F (Unicode 15, UAX #11), merged into blocks.
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x231A...0x231B, 0x2329...0x232A,
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // kana, bopomofo, Hangul compatibility Jamo, kanbun, CJK strokes, enclosed, compatibility
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19, 0xFE30...0xFE6F,  // vertical forms, CJK compatibility forms, small forms
        0xFF00...0xFF60, 0xFFE0...0xFFE6,  // full-width forms
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,  // Tangut, Khitan, kana supplements
        0x1F300...0x1F64F, 0x1F900...0x1F9FF,  // pictographs, emoticons
        0x20000...0x2FFFD, 0x30000...0x3FFFD,  // CJK extensions B–H
    ]

    /// The text cut to `width` columns, ending with `…` when it was cut.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard self.of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = self.of(character)
            if used + characterWidth > width - 1 { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…"
    }

    /// Line breaks, tabs and other control characters made spaces, so one value stays on one line.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }) else {
            return text
        }
        return String(
            text.map { character -> Character in
                character.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }
                    ? " " : character
            }
        )
    }
}
