// MARK: - Duration + an interval as an operator writes it

extension Duration {
    /// An interval such as `marquee lag --interval` takes: `500ms`, `1s`, `1.5s`, `2m`, `1h`, or a bare number of
    /// seconds; spaces around it are ignored. `nil` for anything else, for zero or less, and for less than a
    /// millisecond or more than a day.
    public init?(interval text: String) {
        let text = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var scale = 1.0
        var number = Substring(text)
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds >= 1, milliseconds <= 86_400_000 else { return nil }
        self = .milliseconds(Int64(milliseconds))
    }
}
