/// Bounds that both the payload readers (``FetchJob/decode(json:)``, ``ImageJob/decode(json:)``) and the checks
/// without a payload (``FetchJob/checked()``, ``ImageJob/checked()``) apply: one place, so the two cannot drift.
enum FieldRules {
    static let pages: ClosedRange<Int64> = 1...500
    static let tmdbIDs: ClosedRange<Int64> = 1...Int64(Int32.max)
    /// TMDB's numeric account ids (`/account` answers `id`).
    static let tmdbAccountIDs: ClosedRange<Int64> = 1...Int64.max
    /// A time as epoch milliseconds, up to 2100 (as records' `fetched_at`).
    static let epochMilliseconds: ClosedRange<Int64> = 0...4_102_444_800_000
    static let years: ClosedRange<Int64> = 1870...2200
    static let queryLength = 500
    static let languageLength = 10
    static let languageExpected = "a language such as ko-KR"
    static let regionLength = 2
    static let regionExpected = "a region such as KR"
    static let dayExpected = "a day as YYYY-MM-DD"
    static let imageURLLength = 2048
    static let imageURLExpected = "an http or https URL"
    static let imageOwnerLength = 200
}
