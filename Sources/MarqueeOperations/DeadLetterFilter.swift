import struct Foundation.Date
import class Foundation.ISO8601DateFormatter

/// Which dead letters to look at: the same filters for listing, replaying and purging (and for a dashboard).
///
/// Every set that is empty lets everything through; the filters that are set must all match.
public struct DeadLetterFilter: Sendable, Hashable {
    /// Stage names (`fetch`, `images`, `records`). Default: every stage.
    public var stages: Set<String> = []
    /// Payload kinds (`tmdb.movie`, `image`, `movie`, `unknown` …). Default: every kind.
    public var kinds: Set<String> = []
    /// Error kinds: `transient`, `permanent`, `poison`, `unknown`. Default: every error kind.
    public var errorKinds: Set<String> = []
    /// Text the error must contain, ignoring case. Default: none.
    public var errorText: String?
    /// Dead-lettered at or after this time (milliseconds since the epoch). Default: none.
    public var since: Int64?
    /// Dead-lettered before this time (milliseconds since the epoch). Default: none.
    public var until: Int64?
    /// Whether letters the reader group already purged count too. Default: `false`.
    public var includesPurged = false

    /// A filter that lets every unpurged letter through.
    public init() {}

    /// Whether no filter is set (every unpurged letter, or every letter with ``includesPurged``).
    public var selectsEverything: Bool {
        self.stages.isEmpty && self.kinds.isEmpty && self.errorKinds.isEmpty && self.errorText == nil
            && self.since == nil && self.until == nil
    }

    /// Whether the stage's letters can match at all.
    public func includes(stage: String) -> Bool { self.stages.isEmpty || self.stages.contains(stage) }

    /// Whether a letter passes every filter.
    public func matches(_ letter: DeadLetter) -> Bool {
        guard self.includesPurged || !letter.isPurged else { return false }
        guard self.includes(stage: letter.id.stage) else { return false }
        guard self.kinds.isEmpty || self.kinds.contains(letter.kind) else { return false }
        guard self.errorKinds.isEmpty || self.errorKinds.contains(letter.errorKind) else { return false }
        if let text = self.errorText, !text.isEmpty {
            guard let error = letter.error, error.lowercased().contains(text.lowercased()) else { return false }
        }
        if self.since != nil || self.until != nil {
            guard let timestamp = letter.timestamp else { return false }
            if let since, timestamp < since { return false }
            if let until, timestamp >= until { return false }
        }
        return true
    }

    /// A point in time as an operator writes it: a time ago (`90s`, `15m`, `2h`, `3d`, `1w`), an ISO 8601 time
    /// with its zone (`2026-11-22T09:30:00Z`, `2026-11-22T18:30:00+09:00`, fractions allowed), or a day
    /// (`2026-11-22`, midnight UTC).
    ///
    /// - Parameters:
    ///   - text: What the operator wrote.
    ///   - nowMilliseconds: Now, in milliseconds since the epoch.
    /// - Returns: Milliseconds since the epoch.
    /// - Throws: A ``OperationsError`` naming the accepted forms.
    public static func time(_ text: String, nowMilliseconds: Int64) throws(OperationsError) -> Int64 {
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000]
        if let unit = text.last, let scale = units[unit], let amount = Int64(text.dropLast()), amount >= 0 {
            let (product, overflow) = amount.multipliedReportingOverflow(by: scale)
            if !overflow { return nowMilliseconds - product }
        }
        let withFractions = ISO8601DateFormatter()
        withFractions.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        // The day formatter ignores whatever follows a date: only a bare day may reach it.
        let isDay = text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") }
        for formatter in isDay ? [day] : [plain, withFractions] {
            if let date = formatter.date(from: text) {
                return Int64((date.timeIntervalSince1970 * 1000).rounded())
            }
        }
        throw OperationsError(
            .deadLetters,
            "'\(text)' is not a time: write a time ago (90s, 15m, 2h, 3d, 1w), an ISO 8601 time with its zone "
                + "(2026-11-22T09:30:00Z) or a day (2026-11-22)"
        )
    }

    /// A time as lists print it: ISO 8601 in UTC, to the second (`2026-11-22T09:30:00Z`).
    public static func format(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
