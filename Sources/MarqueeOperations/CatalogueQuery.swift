import MarqueeCore
import MarqueeStore

/// What `marquee query` checks in its arguments before it opens the store, so a mistake is a usage error rather
/// than a refusal from the store.
public enum CatalogueQuery {
    /// Whether `text` has a letter or digit to search for, as the store folds titles and names
    /// (``TitleMatching/fold(_:)``); the store refuses a search without one.
    public static func isSearchable(_ text: String) -> Bool { TitleMatching.fold(text) != nil }

    /// Whether `limit` is a number of rows the store's searches take (1 to `Store.maximumLimit`).
    public static func isLimit(_ limit: Int) -> Bool { (1...Store.maximumLimit).contains(limit) }

    /// `--date` as `YYYY-MM-DD`: eight digits (`YYYYMMDD`) get their dashes, anything else is left as written.
    public static func day(_ date: String) -> String {
        let digits = date.filter(\.isNumber)
        guard date.count == 8, digits.count == 8 else { return date }
        return "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
    }

    /// Whether `text` is `YYYY-MM-DD` (four, two and two ASCII digits) and a real calendar day.
    public static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return false }
        return LocalDate(parsing: text) != nil
    }

    /// Whether `text` is a KOFIC week number: `YYYYWW`, six ASCII digits, the week from 01 to 53.
    public static func isWeek(_ text: String) -> Bool {
        guard text.count == 6, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
            let number = Int(text.suffix(2))
        else { return false }
        return (1...53).contains(number)
    }
}
