/// An inline SVG line chart of one series over time, with its numbers as a text alternative.
///
/// Rendered on the server, so the page needs no script to draw it and a screen reader gets the same numbers
/// (`<title>`, `<desc>` and a data table beside it).
struct LineChart: Sendable {
    struct Point: Sendable, Hashable {
        /// Epoch ms.
        var time: Int64
        var value: Double?
    }

    /// Unique within the page (element ids).
    var id: String
    /// What is drawn, e.g. `fetch: lag in messages`.
    var title: String
    /// The unit of the values, for the text alternative: `messages`, `seconds`.
    var unit: String
    var points: [Point]
    /// The right edge of the time axis (epoch ms).
    var now: Int64
    /// How far back the time axis reaches at most. Default: an hour.
    var maximumSpan: Int64 = 3_600_000

    /// How far back the time axis reaches: from the first sample (at least 5 minutes) up to ``maximumSpan``, so a
    /// young history is not squeezed against the right edge.
    var span: Int64 {
        let first = self.points.first?.time ?? self.now
        return min(self.maximumSpan, max(300_000, self.now - first))
    }

    static let width = 600.0
    static let height = 160.0
    private static let left = 52.0
    private static let right = 8.0
    private static let top = 10.0
    private static let bottom = 22.0

    /// The largest value drawn (the top of the value axis is at least 1).
    var maximum: Double { max(1, self.points.compactMap(\.value).max() ?? 0) }

    /// A sentence with the numbers: span, samples, lowest, highest, latest.
    var summary: String {
        let values = self.points.compactMap(\.value)
        guard let latest = self.points.last, !values.isEmpty else {
            return "\(self.title): no samples yet."
        }
        let covered = Format.duration(.milliseconds(latest.time - (self.points.first?.time ?? latest.time)))
        let last = latest.value.map { Self.number($0) + " \(self.unit)" } ?? "unknown"
        return "\(self.title) over the last \(covered), \(self.points.count) samples: "
            + "lowest \(Self.number(values.min() ?? 0)), highest \(Self.number(values.max() ?? 0)), latest \(last)."
    }

    /// The SVG element.
    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let span = self.span
        let start = self.now - span
        let maximum = self.maximum
        func x(_ time: Int64) -> Double {
            Self.left + plotWidth * Double(min(max(time - start, 0), span)) / Double(span)
        }
        func y(_ value: Double) -> Double { Self.top + plotHeight * (1 - min(max(value / maximum, 0), 1)) }

        // Segments: a missing value (the sample failed) breaks the line.
        var paths: [String] = []
        var current: [String] = []
        for point in self.points where point.time >= start {
            guard let value = point.value else {
                if !current.isEmpty { paths.append(current.joined(separator: " ")) }
                current = []
                continue
            }
            current.append(
                (current.isEmpty ? "M" : "L") + Self.coordinate(x(point.time)) + "," + Self.coordinate(y(value))
            )
        }
        if !current.isEmpty { paths.append(current.joined(separator: " ")) }
        let dots = self.points.suffix(1).compactMap { point in
            point.value.map {
                let (cx, cy) = (Self.coordinate(x(point.time)), Self.coordinate(y($0)))
                return "<circle class=\"chart-dot\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"3\"/>"
            }
        }

        let titleID = "\(self.id)-title"
        let descriptionID = "\(self.id)-desc"
        let bottomY = Self.coordinate(Self.top + plotHeight)
        let rightX = Self.coordinate(Self.left + plotWidth)
        var svg = """
            <svg class="chart" id="\(self.id)" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" \
            role="img" aria-labelledby="\(titleID) \(descriptionID)" preserveAspectRatio="none" \
            data-points="\(self.points.count)">\
            <title id="\(titleID)">\(HTML.escape(self.title))</title>\
            <desc id="\(descriptionID)">\(HTML.escape(self.summary))</desc>\
            <line class="chart-grid" x1="\(Int(Self.left))" y1="\(Int(Self.top))" x2="\(rightX)" \
            y2="\(Int(Self.top))"/>\
            <line class="chart-grid" x1="\(Int(Self.left))" y1="\(bottomY)" x2="\(rightX)" y2="\(bottomY)"/>\
            <text class="chart-label" x="\(Int(Self.left) - 6)" y="\(Int(Self.top) + 4)" text-anchor="end">\
            \(Self.number(maximum))</text>\
            <text class="chart-label" x="\(Int(Self.left) - 6)" y="\(bottomY)" text-anchor="end">0</text>\
            <text class="chart-label" x="\(Int(Self.left))" y="\(Int(Self.height) - 4)">−\(span / 60_000) min</text>\
            <text class="chart-label" x="\(rightX)" y="\(Int(Self.height) - 4)" text-anchor="end">now</text>
            """
        for path in paths { svg += "<path class=\"chart-line\" d=\"\(path)\"/>" }
        svg += dots.joined()
        svg += "</svg>"
        return svg
    }

    /// At most `count` points, evenly spread, the latest included: the rows of the data table.
    func tableRows(count: Int = 12) -> [Point] {
        guard self.points.count > count, count > 1 else { return self.points }
        let step = Double(self.points.count - 1) / Double(count - 1)
        return (0..<count).map { self.points[Int((Double($0) * step).rounded())] }
    }

    static func coordinate(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// An integer when whole, else one decimal.
    static func number(_ value: Double) -> String {
        if value.isNaN || value.isInfinite { return "—" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String((value * 10).rounded() / 10)
    }
}

/// HTML text escaping for what is written outside templates (SVG).
enum HTML {
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
