/// Calendar-date normalisation.
enum ISODate {
    /// `YYYY-MM-DD` for `YYYY-MM-DD…` or `YYYYMMDD`; `nil` otherwise.
    static func normalized(_ text: String) -> String? {
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

    /// `YYYYMMDD` for `YYYY-MM-DD` or `YYYYMMDD`.
    static func compact(_ text: String) -> String? {
        self.normalized(text).map { $0.replacing("-", with: "") }
    }
}
