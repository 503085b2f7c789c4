public import MarqueeCore

/// A date placeholder in a job template, relative to the window's day in the schedule's zone.
///
/// Written `${BASE}`, `${BASE-N<unit>}` or `${BASE+N<unit>}`, optionally followed by `:iso`:
///
/// | base | the day |
/// |---|---|
/// | `today` | the window's day (the wall-clock day at the window's start) |
/// | `yesterday` | the day before |
/// | `week` | the Monday of the window's ISO week |
///
/// Units are `d` (days) and `w` (weeks). The result is `yyyyMMdd` (KOFIC's form), or `yyyy-MM-dd` with `:iso`.
/// Examples: `${yesterday}`, `${today-7d}`, `${week-1w}` (last week's Monday), `${yesterday:iso}`.
public struct DateExpression: Hashable, Sendable, CustomStringConvertible {
    /// The day an expression counts from.
    public enum Base: String, Hashable, Sendable, CaseIterable {
        case today, yesterday, week
    }

    /// The day counted from.
    public var base: Base
    /// Days added to the base (negative: earlier).
    public var days: Int64
    /// `yyyy-MM-dd` instead of `yyyyMMdd`.
    public var isISO: Bool

    /// Parses the text between `${` and `}`.
    public init?(parsing text: Substring) {
        var body = text
        self.isISO = false
        if body.hasSuffix(":iso") {
            body = body.dropLast(4)
            self.isISO = true
        }
        guard
            let base = Base.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count }).first(where: {
                body.hasPrefix($0.rawValue)
            })
        else { return nil }
        self.base = base
        let rest = body.dropFirst(base.rawValue.count)
        if rest.isEmpty {
            self.days = 0
            return
        }
        guard let sign = rest.first, sign == "+" || sign == "-", let unit = rest.last, unit == "d" || unit == "w",
            let count = Int64(rest.dropFirst().dropLast()), rest.dropFirst().dropLast().allSatisfy(\.isNumber),
            (0...3660).contains(count)
        else { return nil }
        self.days = (sign == "-" ? -count : count) * (unit == "w" ? 7 : 1)
    }

    /// The day this expression names for a window on `date`.
    public func day(for date: LocalDate) -> LocalDate {
        let base: LocalDate =
            switch self.base {
            case .today: date
            case .yesterday: date.adding(days: -1)
            case .week: date.mondayOfWeek
            }
        return base.adding(days: self.days)
    }

    /// The text this expression stands for in a window on `date`.
    public func text(for date: LocalDate) -> String {
        let day = self.day(for: date)
        return self.isISO ? day.description : day.compact
    }

    public var description: String {
        let offset = self.days == 0 ? "" : (self.days < 0 ? "-" : "+") + "\(abs(self.days))d"
        return "${\(self.base.rawValue)\(offset)\(self.isISO ? ":iso" : "")}"
    }

    /// Replaces every `${…}` in `text` for a window on `date`.
    ///
    /// - Returns: The text, or the first placeholder that is not a date expression (its body).
    static func substitute(_ text: String, date: LocalDate) -> Result<String, PlaceholderError> {
        guard text.contains("${") else { return .success(text) }
        var output = ""
        var rest = Substring(text)
        while let dollar = rest.indices.first(where: { rest[$0] == "$" && rest[rest.index(after: $0)...].first == "{" })
        {
            output += rest[..<dollar]
            let body = rest.index(dollar, offsetBy: 2)
            guard let close = rest[body...].firstIndex(of: "}") else {
                return .failure(PlaceholderError(text: String(rest[dollar...])))
            }
            guard let expression = DateExpression(parsing: rest[body..<close]) else {
                return .failure(PlaceholderError(text: String(rest[dollar...close])))
            }
            output += expression.text(for: date)
            rest = rest[rest.index(after: close)...]
        }
        return .success(output + rest)
    }

    struct PlaceholderError: Error {
        var text: String
    }
}
