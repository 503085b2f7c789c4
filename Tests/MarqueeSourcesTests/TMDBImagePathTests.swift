import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// ``TMDBParser/imagePath(_:)`` checks ASCII paths byte by byte (make bench-fetch): the same verdicts as the
/// character-wise check it replaced, on every short string over characters that matter to it.
@Suite struct TMDBImagePathTests {
    @Test func asciiWhitespaceCharactersAreTabToCarriageReturnAndSpace() {
        for byte in UInt8(0)..<0x80 {
            let isWhitespace = byte == 0x20 || (0x09...0x0D).contains(byte)
            #expect(Character(Unicode.Scalar(byte)).isWhitespace == isWhitespace, "\(byte)")
        }
    }

    @Test func decidesAsTheCharacterwiseCheck() {
        let alphabet = [
            "/", "a", ".", " ", "\t", "\r", "\n", "\u{0B}", "\u{1C}", "\u{7F}", "?", "#", "é", "\u{301}",
            "\u{600}", "\u{A0}", "\u{3000}",
        ]
        var strings = [""]
        for _ in 0..<3 { strings += strings.flatMap { prefix in alphabet.map { prefix + $0 } } }
        strings += ["/abc.jpg", "/a b.jpg", "/https://x/y.png", " /trim.jpg ", "/\u{600} x.jpg", "//", "/\r\n"]
        for string in Set(strings) {
            let expected = JSONValue.string(string).trimmedText.flatMap(TMDBParser.characterwiseImagePath)
            #expect(TMDBParser.imagePath(JSONValue.string(string)) == expected, "\(string.debugDescription)")
        }
        #expect(TMDBParser.imagePath(nil as JSONValue?) == nil)
        #expect(TMDBParser.imagePath(JSONValue.integer(1)) == nil)
    }
}
