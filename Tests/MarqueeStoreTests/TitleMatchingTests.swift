import Foundation
import Testing

@testable import MarqueeStore

/// Titles are folded for matching (docs/store.md): compatibility-normalized, lowercased, letters and digits only.
struct TitleMatchingTests {
    /// The slow path: what `fold` gives whatever the title, through Unicode normalization.
    static func normalized(_ title: String) -> String {
        String(
            String.UnicodeScalarView(
                title.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars.filter {
                    $0.properties.isAlphabetic || $0.properties.numericType != nil
                }
            )
        )
    }

    @Test func foldsTitlesOfAnyScript() {
        #expect(
            TitleMatching.fold("The Lord of the Rings: The Return of the King") == "thelordoftheringsthereturnoftheking"
        )
        #expect(TitleMatching.fold("Se7en (1995)") == "se7en1995")
        #expect(TitleMatching.fold("기생충") == "기생충")
        #expect(TitleMatching.fold("Amélie") == "amélie")
        #expect(TitleMatching.fold("ＡＢＣ①") == "abc1", "full-width letters and circled digits are compatibility forms")
        #expect(TitleMatching.fold("Ⅻ Monkeys") == "xiimonkeys")
        #expect(TitleMatching.fold("?!…") == nil, "no letter or digit")
        #expect(TitleMatching.fold("") == nil)
        #expect(TitleMatching.fold(nil) == nil)
    }

    /// The ASCII path skips normalization; for every printable ASCII character, alone and in titles, it gives what
    /// normalization gives.
    @Test func theASCIIPathAgreesWithNormalization() throws {
        var titles = (0x20...0x7E).map { String(UnicodeScalar(UInt8($0))) }
        titles += [
            "Mission: Impossible – Dead Reckoning", "WALL·E", "M*A*S*H", "2001: A Space Odyssey", "  x  ", "\t\n",
        ]
        for seed in 0..<200 {
            var bytes: [UInt8] = []
            for index in 0..<(seed % 40) {
                let offset: Int = (seed * 31 + index * 17) % 95
                bytes.append(UInt8(0x20 + offset))
            }
            titles.append(String(decoding: bytes, as: UTF8.self))
        }
        for title in titles where title.utf8.allSatisfy({ $0 < 0x80 }) {
            let fast = try #require(TitleMatching.foldASCII(title), "\(title) is ASCII")
            #expect(fast == Self.normalized(title), "\(title)")
        }
        #expect(TitleMatching.foldASCII("WALL·E") == nil, "a byte outside ASCII takes the normalizing path")
    }
}
