internal import CMarqueeCurl
internal import Ccurl

/// Parses `Retry-After` (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The wait `value` asks for: delta-seconds, or an HTTP-date (any of the three formats) minus `now`, never
    /// negative. `nil` if `value` is neither.
    ///
    /// - Parameters:
    ///   - value: The field value.
    ///   - now: The current time, seconds since the epoch.
    static func parse(_ value: String, now: Int) -> Duration? {
        let value = value.trimmingPrefix(while: \.isWhitespace)
        let trimmed = String(value.reversed().drop(while: \.isWhitespace).reversed())
        guard !trimmed.isEmpty else { return nil }
        if trimmed.allSatisfy(\.isASCII) && trimmed.allSatisfy(\.isNumber) {
            // Huge values saturate; the limiter caps them anyway.
            return .seconds(Int(trimmed) ?? Int(Int32.max))
        }
        // curl_getdate parses RFC 1123, RFC 850 and asctime dates; it returns -1 for anything else.
        let date = curl_getdate(trimmed, nil)
        guard date != -1 else { return nil }
        return .seconds(max(0, Int(date) - now))
    }
}
