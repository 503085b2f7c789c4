import MarqueeOperations
import Testing

@Suite struct TextFormatTests {
    @Test func numbersAreGroupedAndRoundedWithADashForNone() {
        #expect(TextFormat.grouped(1_234_567) == "1,234,567")
        #expect(TextFormat.grouped(-1000) == "-1,000")
        #expect(TextFormat.grouped(999) == "999")
        #expect(TextFormat.grouped(nil) == "–")
        #expect(TextFormat.decimal(1234.56, digits: 1) == "1,234.6")
        #expect(TextFormat.decimal(0.05, digits: 2) == "0.05")
        #expect(TextFormat.decimal(-0.04, digits: 1) == "0.0")
        #expect(TextFormat.decimal(-2.5, digits: 0) == "-3")
        #expect(TextFormat.decimal(.infinity, digits: 1) == "–")
        #expect(TextFormat.decimal(nil, digits: 1) == "–")
    }

    @Test func countsSizesAndTimesReadAsWords() {
        #expect(TextFormat.count(1, "movie") == "1 movie")
        #expect(TextFormat.count(0, "movie") == "0 movies")
        #expect(TextFormat.count(2, "entry", plural: "entries") == "2 entries")
        #expect(TextFormat.bytes(999) == "999 B")
        #expect(TextFormat.bytes(34_500) == "34 KB")
        #expect(TextFormat.bytes(1_234_567) == "1.2 MB")
        #expect(TextFormat.elapsed(.seconds(42)) == "0:42")
        #expect(TextFormat.elapsed(.seconds(723)) == "12:03")
        #expect(TextFormat.elapsed(.seconds(3723)) == "1:02:03")
        #expect(TextFormat.age(milliseconds: 45_999) == "45s")
        #expect(TextFormat.age(milliseconds: 720_000) == "12m")
        #expect(TextFormat.age(milliseconds: 3 * 3_600_000 + 59_000) == "3h")
        #expect(TextFormat.age(milliseconds: 5 * 86_400_000) == "5d")
    }
}
