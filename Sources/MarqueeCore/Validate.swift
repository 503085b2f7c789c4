/// Field checks shared by payload kinds.
enum Validate {
    static func language(_ value: String) -> Bool {
        // What passes is `xx` or `xx-YY` in ASCII letters, one byte a character: checked on the bytes, without
        // Unicode property lookups (PayloadCheckEquivalenceTests holds it to a character-wise check).
        var value = value
        return value.withUTF8 { bytes in
            let isLower = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
            let isUpper = { (byte: UInt8) in (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
            switch bytes.count {
            case 2: return isLower(bytes[0]) && isLower(bytes[1])
            case 5:
                return isLower(bytes[0]) && isLower(bytes[1]) && bytes[2] == UInt8(ascii: "-") && isUpper(bytes[3])
                    && isUpper(bytes[4])
            default: return false
            }
        }
    }

    static func region(_ value: String) -> Bool {
        value.count == 2 && value.allSatisfy { $0.isASCII && $0.isUppercase }
    }

    /// `yyyyMMdd`, a real calendar day from 1900 on.
    static func date(_ value: String) -> Bool {
        guard value.count == 8, value.allSatisfy({ $0.isASCII && $0.isNumber }),
            let year = Int(value.prefix(4)), let month = Int(value.dropFirst(4).prefix(2)),
            let day = Int(value.suffix(2)),
            year >= 1900, (1...12).contains(month)
        else { return false }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// `YYYY-MM-DD`, a real calendar day.
    static func day(_ value: String) -> Bool {
        value.utf8.count == 10 && LocalDate(parsing: value) != nil
    }

    /// Eight ASCII digits or capital letters: KOFIC's codes are mostly `YYYY` and four digits, but its catalogue
    /// also lists codes with a letter (`2023C165`, films released online only).
    static func koficCode(_ value: String) -> Bool {
        value.utf8.count == 8 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    static func openLibraryWork(_ value: String) -> Bool {
        value.hasPrefix("OL") && value.hasSuffix("W") && value.count > 3
            && value.dropFirst(2).dropLast().allSatisfy { $0.isASCII && $0.isNumber }
    }
}
