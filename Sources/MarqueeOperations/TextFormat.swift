import MarqueeCore

/// How `marquee` writes numbers, counts and times in its tables and lines.
public enum TextFormat {
    /// `0:42`, `12:03`, `1:02:03`.
    public static func elapsed(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return seconds >= 3600
            ? "\(seconds / 3600):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
            : "\(seconds / 60):\(two(seconds % 60))"
    }

    /// `1,234,567`; `–` for none.
    public static func grouped(_ value: Int?) -> String {
        value?.groupedDescription ?? "–"
    }

    /// A number with `digits` decimals, its whole part grouped; `–` for none (or not finite).
    public static func decimal(_ value: Double?, digits: Int) -> String {
        guard let value, value.isFinite else { return "–" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var text = (value < 0 && scaled != 0 ? "-" : "") + grouped(whole)
        if digits > 0 {
            let fractionText = String(fraction)
            text += "." + String(repeating: "0", count: max(0, digits - fractionText.count)) + fractionText
        }
        return text
    }

    /// `1 movie`, `3 movies`; `plural` for nouns that do not take an `s`.
    public static func count(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
    }

    /// `812 B`, `34 KB`, `1.2 MB`.
    public static func bytes(_ count: Int) -> String {
        if count < 1000 { return "\(count) B" }
        if count < 1_000_000 { return "\(count / 1000) KB" }
        return self.decimal(Double(count) / 1_000_000, digits: 1) + " MB"
    }

    /// `45s`, `12m`, `3h`, `5d`: the largest whole unit of an age in milliseconds.
    public static func age(milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        switch seconds {
        case ..<60: return "\(seconds)s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86_400: return "\(seconds / 3600)h"
        default: return "\(seconds / 86_400)d"
        }
    }
}
