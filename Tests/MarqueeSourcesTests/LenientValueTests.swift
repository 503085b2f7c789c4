import MarqueeCore
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
        #expect(JSONValue.object(["a": .null])["a"] == nil)
    }
}
