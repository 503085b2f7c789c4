/// A table for a terminal: columns aligned by *display width*, so Korean, Japanese and Chinese text (two
/// columns per character) lines up with Latin text.
struct TextTable {
    enum Alignment { case left, right }

    struct Column {
        var header: String
        var alignment: Alignment = .left
        /// Longer cells are cut with `…` to this many terminal columns.
        var maxWidth: Int = 40
    }

    var columns: [Column]
    var rows: [[String]] = []

    init(_ columns: [Column]) { self.columns = columns }

    mutating func append(_ row: [String]) { self.rows.append(row) }

    /// The header (unless `showingHeader` is false) and the rows, two spaces between columns, no trailing spaces.
    func render(showingHeader: Bool = true) -> String {
        let cells = self.rows.map { row in
            self.columns.indices.map { index in
                DisplayWidth.truncate(
                    DisplayWidth.printable(index < row.count ? row[index] : ""),
                    to: self.columns[index].maxWidth
                )
            }
        }
        let widths = self.columns.indices.map { index in
            ([DisplayWidth.of(self.columns[index].header)] + cells.map { DisplayWidth.of($0[index]) }).max() ?? 0
        }
        func line(_ values: [String]) -> String {
            var text = ""
            for (index, value) in values.enumerated() {
                if index > 0 { text += "  " }
                let padding = String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(value)))
                text += self.columns[index].alignment == .left ? value + padding : padding + value
            }
            while text.last == " " { text.removeLast() }
            return text
        }
        return ((showingHeader ? [line(self.columns.map(\.header))] : []) + cells.map(line)).joined(separator: "\n")
    }
}

/// How many terminal columns text takes: East Asian Wide and Fullwidth characters (Hangul, kana, CJK
/// ideographs, full-width forms) and emoji take two, combining marks and format characters none, the rest one.
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + self.of($1) }
    }

    static func of(_ character: Character) -> Int {
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
    static func truncate(_ text: String, to width: Int) -> String {
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
    static func printable(_ text: String) -> String {
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
