import Foundation
import Testing

@testable import MarqueeDashboard

@Suite struct LineChartTests {
    let now: Int64 = 1_800_000_000_000

    @Test func drawsOnePathWithItsNumbersAsTextAlternative() {
        let points = (0..<7).map { LineChart.Point(time: self.now - Int64(6 - $0) * 10_000, value: Double($0 * 10)) }
        let chart = LineChart(id: "c", title: "fetch: lag in messages", unit: "messages", points: points, now: self.now)
        let svg = chart.svg
        #expect(svg.hasPrefix("<svg class=\"chart\" id=\"c\""))
        #expect(svg.contains("role=\"img\" aria-labelledby=\"c-title c-desc\""))
        #expect(svg.contains("<title id=\"c-title\">fetch: lag in messages</title>"))
        #expect(svg.components(separatedBy: "<path class=\"chart-line\"").count == 2, "one line")
        #expect(svg.contains("data-points=\"7\""))
        #expect(
            chart.summary
                == "fetch: lag in messages over the last 1m00s, 7 samples: lowest 0, highest 60, latest 60 messages."
        )
        // The value axis tops at the highest value; the latest point is on the right edge.
        #expect(svg.contains(">60</text>"))
        #expect(svg.contains(">−5 min</text>"), "a young history spans 5 minutes, not the hour")
        #expect(svg.contains("<circle class=\"chart-dot\" cx=\"592\" cy=\"10\""))
    }

    @Test func aMissingValueBreaksTheLineAndNoSamplesSaysSo() {
        let points: [LineChart.Point] = [
            .init(time: self.now - 30_000, value: 1), .init(time: self.now - 20_000, value: 2),
            .init(time: self.now - 10_000, value: nil), .init(time: self.now, value: 3),
        ]
        let chart = LineChart(id: "c", title: "t", unit: "seconds", points: points, now: self.now)
        #expect(chart.svg.components(separatedBy: "<path class=\"chart-line\"").count == 3, "two segments")
        let empty = LineChart(id: "e", title: "images: lag", unit: "messages", points: [], now: self.now)
        #expect(empty.summary == "images: lag: no samples yet.")
        #expect(!empty.svg.contains("<path"))
    }

    @Test func escapesTitlesAndSpreadsTableRowsKeepingTheLatest() {
        let chart = LineChart(
            id: "x",
            title: "<script>&",
            unit: "messages",
            points: (0..<100).map { .init(time: self.now - Int64(99 - $0) * 1000, value: Double($0)) },
            now: self.now
        )
        #expect(chart.svg.contains("<title id=\"x-title\">&lt;script&gt;&amp;</title>"))
        let rows = chart.tableRows(count: 12)
        #expect(rows.count == 12)
        #expect(rows.first?.value == 0)
        #expect(rows.last?.value == 99)
        #expect(LineChart.number(2.25) == "2.3" || LineChart.number(2.25) == "2.2")
        #expect(LineChart.number(1200) == "1200")
    }

    @Test func formatsTimesAndDurations() {
        #expect(Format.time(1_795_362_002_120) == "2026-11-22 15:40:02")
        #expect(Format.duration(.milliseconds(850)) == "850ms")
        #expect(Format.duration(.seconds(185)) == "3m05s")
        #expect(Format.rate(85) == "85.0/s")
    }
}
