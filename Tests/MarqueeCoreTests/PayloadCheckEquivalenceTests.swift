import MarqueeJSON
import Testing

@testable import MarqueeCore

/// The payloads' checks made faster agree with the simpler ones they replaced, and a refused payload says why as
/// before.
@Suite struct PayloadCheckEquivalenceTests {
    @Test func payloadErrorsAreAsBefore() {
        func message(_ bytes: [UInt8]) -> String? {
            do {
                _ = try JSONValue.parse(bytes)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message([0x7B, 0xFF, 0x7D])?.contains("the payload is not UTF-8") == true)
        #expect(message([0x22, 0xC3, 0x22])?.contains("the payload is not UTF-8") == true)
        #expect(message(Array("{\"a\":1,\"a\":2}".utf8))?.contains("names a key twice") == true)
        #expect(message(Array("{\"a\":1,}".utf8))?.contains("the payload is not JSON") == true)
        #expect(message(Array("{\"a\":\"é\"}".utf8)) == nil)
    }

    @Test func isHTTPURLDecidesASCIIAsCharacterwise() {
        let parts = [
            "http://", "https://", "HTTPS://", "hTtP://", "ftp://", "http:/", "http:///", "", "h", "/", "a.b",
            " ", "\t", "\r\n", "\u{0B}", "\u{1C}", "x y", "é", "\u{A0}", "\u{301}", "?q=1", "#f",
        ]
        for first in parts {
            for second in parts {
                for third in ["", "host", "/p", " "] {
                    let url = first + second + third
                    #expect(ImageJob.isHTTPURL(url) == ImageJob.isHTTPURLCharacterwise(url), "\(url.debugDescription)")
                }
            }
        }
    }

    @Test func languageDecidesAsCharacterwise() {
        let alphabet = ["a", "z", "Z", "-", "é", "\u{301}", "\r\n", "["]
        var strings = [""]
        for _ in 0..<5 {
            strings += strings.filter { $0.unicodeScalars.count < 5 }.flatMap { p in alphabet.map { p + $0 } }
        }
        strings += ["en-US", "ko-KR", "en", "EN-us", "en-U", "en-USA", "en-US-x", "en_US", "e\u{301}n-US"]
        for string in Set(strings) {
            #expect(Validate.language(string) == Validate.languageCharacterwise(string), "\(string.debugDescription)")
        }
    }
}

/// The former character-wise language check: the oracle `languageDecidesAsCharacterwise` compares with.
extension Validate {
    fileprivate static func languageCharacterwise(_ value: String) -> Bool {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts[0].count == 2, parts[0].allSatisfy({ $0.isASCII && $0.isLowercase }) else {
            return false
        }
        return parts.count == 1 || (parts[1].count == 2 && parts[1].allSatisfy { $0.isASCII && $0.isUppercase })
    }
}
