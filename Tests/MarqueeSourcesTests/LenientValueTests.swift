import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

@Suite struct LenientValueTests {
    @Test func isoDates() {
        #expect(ISODate.normalized("20220622") == "2022-06-22")
        #expect(ISODate.normalized("2022-06-22") == "2022-06-22")
        #expect(ISODate.normalized("2014-05-31T21:57:43.868Z") == "2014-05-31")
        #expect(ISODate.normalized("2024-02-29") == "2024-02-29")
        for invalid in ["2023-02-29", "2022-13-01", "0000-00-00", "2022-6-1", "March 2005", "2022-06-22x"] {
            #expect(ISODate.normalized(invalid) == nil, "\(invalid)")
        }
        #expect(JSONValue.string(" ").isoDate == nil)
        #expect(JSONValue.string("").isoDate == nil)
    }

    @Test func numbersFromStrings() {
        #expect(JSONValue.string("584559330").int == 584_559_330)
        #expect(JSONValue.string("-15").int == -15)
        #expect(JSONValue.string("1,234").int == 1234)
        #expect(JSONValue.string("-15.3").double == -15.3)
        #expect(JSONValue.number(7.0).int == 7)
        #expect(JSONValue.number(7.5).int == nil)
        #expect(JSONValue.string("").int == nil)
        #expect(JSONValue.integer(6).double == 6)
    }

    @Test func blanksAreMissing() {
        #expect(JSONValue.string(" ").text == nil)
        #expect(JSONValue.string("").trimmedText == nil)
        #expect(JSONValue.string("2021-MF03006 ").trimmedText == "2021-MF03006")
        #expect(JSONValue.string(" keep  inner ").text == " keep  inner ")
        #expect(JSONValue.string("\u{00A0}\t\u{3000}").text == nil, "Unicode whitespace is blank too")
        #expect(JSONValue.string("기생충\u{3000}").trimmedText == "기생충")
        #expect(JSONValue.string("Parasite").trimmedText == "Parasite")
        #expect(JSONValue.string("赤風と赤雪").trimmedText == "赤風と赤雪", "nothing to trim at either end")
        #expect(JSONValue.string("\u{A0}赤風 と").trimmedText == "赤風 と")
        #expect(JSONValue.string("é\u{301}\u{2003}").trimmedText == "é\u{301}")
        #expect(JSONValue.string("\u{3000}\u{A0}").trimmedText == nil)
        #expect(JSONValue.object(["a": .null])["a"] == nil)
    }
}

/// `ISODate.normalized` agrees with the reading it replaced (made of arrays and strings) on every shape of date.
@Suite struct ISODateEquivalenceTests {
    /// The reading before (kept here as the reference).
    static func reference(_ text: String) -> String? {
        let digits: [UInt8]
        let utf8 = Array(text.utf8)
        if utf8.count >= 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") {
            digits = Array(utf8[0..<4] + utf8[5..<7] + utf8[8..<10])
            if utf8.count > 10, utf8[10] != UInt8(ascii: "T"), utf8[10] != UInt8(ascii: " ") { return nil }
        } else if utf8.count == 8 {
            digits = utf8
        } else {
            return nil
        }
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let value = { (range: Range<Int>) in digits[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        let (year, month, day) = (value(0..<4), value(4..<6), value(6..<8))
        guard year >= 1800, (1...12).contains(month) else { return nil }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return nil }
        let string = String(decoding: digits, as: UTF8.self)
        return "\(string.prefix(4))-\(string.dropFirst(4).prefix(2))-\(string.suffix(2))"
    }

    @Test func readsEveryDateAsBefore() {
        var texts = [
            "", "2022", "20220622", "2022-06-22", "2022-06-22T10:00:00Z", "2022-06-22 10:00", "2022-06-22x",
            "2022/06/22", "2022-6-22", "1799-12-31", "1800-01-01", "2000-02-29", "1900-02-29", "2024-02-30",
            "2022-00-10", "2022-13-10", "2022-04-31", "2022-04-30", "20221231", "2022123", "202212311",
            "２０２２-06-22", "2022-06-2２", "2022-06-22T", "abcd-ef-gh", "0000-00-00", "9999-12-31",
        ]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789-T x".utf8)
        for _ in 0..<20_000 {
            let length = [8, 10, 11, 12, Int.random(in: 0...14, using: &generator)].randomElement(using: &generator)!
            texts.append(
                String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
            )
            let year = Int.random(in: 1790...2030, using: &generator)
            let month = Int.random(in: 0...13, using: &generator)
            let day = Int.random(in: 0...32, using: &generator)
            let pad = { (value: Int, width: Int) in
                String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
            }
            texts.append("\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))")
            texts.append("\(pad(year, 4))\(pad(month, 2))\(pad(day, 2))")
        }
        var differing: [String] = []
        var dates = 0
        for text in texts {
            let normalized = ISODate.normalized(text)
            if normalized != Self.reference(text) { differing.append(text) }
            if normalized != nil { dates += 1 }
        }
        #expect(differing.isEmpty, "\(differing.prefix(20))")
        #expect(dates > 5000, "valid dates are among them")
    }
}
