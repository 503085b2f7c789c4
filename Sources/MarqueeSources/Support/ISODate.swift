/// Calendar-date normalisation.
enum ISODate {
    /// `YYYY-MM-DD` for `YYYY-MM-DD…` or `YYYYMMDD`; `nil` otherwise.
    ///
    /// Read on the text's bytes and written into the result directly: every movie record has a date, and the
    /// arrays and strings made on the way were a few percent of a detail's parse (make bench-fetch).
    static func normalized(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { utf8 -> String? in
            // Where the eight digits are: YYYY-MM-DD (and a time after a "T" or a space), or YYYYMMDD.
            let dashed: Bool
            if utf8.count >= 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") {
                if utf8.count > 10, utf8[10] != UInt8(ascii: "T"), utf8[10] != UInt8(ascii: " ") { return nil }
                dashed = true
            } else if utf8.count == 8 {
                dashed = false
            } else {
                return nil
            }
            // 0…3 the year, 4…5 the month, 6…7 the day.
            var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &digits) { digits -> Bool in
                for index in 0..<8 {
                    let position = dashed ? index + (index >= 6 ? 2 : index >= 4 ? 1 : 0) : index
                    let byte = utf8[position]
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
                    digits[index] = byte
                }
                return true
            }
            guard valid else { return nil }
            let zero = UInt8(ascii: "0")
            let year =
                Int(digits.0 - zero) * 1000 + Int(digits.1 - zero) * 100 + Int(digits.2 - zero) * 10
                + Int(digits.3 - zero)
            let month = Int(digits.4 - zero) * 10 + Int(digits.5 - zero)
            let day = Int(digits.6 - zero) * 10 + Int(digits.7 - zero)
            guard year >= 1800, (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year) else {
                return nil
            }
            return withUnsafeBytes(of: digits) { digits in
                String(unsafeUninitializedCapacity: 10) { output in
                    for index in 0..<4 { output[index] = digits[index] }
                    output[4] = UInt8(ascii: "-")
                    output[5] = digits[4]
                    output[6] = digits[5]
                    output[7] = UInt8(ascii: "-")
                    output[8] = digits[6]
                    output[9] = digits[7]
                    return 10
                }
            }
        }
    }

    /// The days of a month (1…12) of the Gregorian calendar.
    static func days(in month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `YYYYMMDD` for `YYYY-MM-DD` or `YYYYMMDD`.
    static func compact(_ text: String) -> String? {
        self.normalized(text).map { $0.replacing("-", with: "") }
    }
}
