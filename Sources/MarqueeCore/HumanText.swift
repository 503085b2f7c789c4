extension Duration {
    /// The duration for people, in two units at most: `850ms`, `4.2s`, `3m05s`, `2h10m`, `1d04h` (what
    /// `marquee lag`, `marquee sources` and the dashboard show).
    public var compactDescription: String {
        let milliseconds = self.components.seconds * 1000 + self.components.attoseconds / 1_000_000_000_000_000
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        let seconds = milliseconds / 1000
        if seconds < 60 {
            let tenths = milliseconds / 100
            return tenths % 10 == 0 ? "\(seconds)s" : "\(tenths / 10).\(tenths % 10)s"
        }
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if seconds < 3600 { return "\(seconds / 60)m\(two(seconds % 60))s" }
        if seconds < 86_400 { return "\(seconds / 3600)h\(two(seconds % 3600 / 60))m" }
        return "\(seconds / 86_400)d\(two(seconds % 86_400 / 3600))h"
    }
}

extension Int {
    /// The number with its digits grouped by thousands: `1,234,567`, `-4,200`.
    public var groupedDescription: String {
        let digits = String(self.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (self < 0 ? "-" : "") + result
    }
}
