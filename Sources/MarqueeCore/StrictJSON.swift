/// A strict RFC 8259 JSON reader, for payloads and upstream bodies alike.
///
/// Foundation's decoder on Linux accepts some invalid documents (a trailing comma after the last element, as in
/// hand-edited Kakao samples); a payload or an upstream body like that is damaged and must be refused, not
/// half-trusted. It is also several times faster than decoding `JSONValue` through `Codable`, and reads the bytes
/// in place: strings without escapes are made from their bytes at once, integers are read without an intermediate
/// string (make bench-fetch). Integers that fit `Int64` become ``JSONValue/integer(_:)``, other numbers
/// ``JSONValue/number(_:)``; a duplicate object key keeps its last value (or refuses the document, for payloads:
/// two readers could disagree on which value counts); a leading UTF-8 byte order mark is skipped.
public struct StrictJSON {
    /// Nesting deeper than this is refused, so a hostile body cannot exhaust the stack.
    public static let maxDepth = 256

    /// The document's bytes, borrowed for the duration of ``parse(_:refusesDuplicateKeys:)`` only.
    ///
    /// - Important: Sound because a reader never outlives the `withUnsafeBufferPointer` /
    ///   `withContiguousStorageIfAvailable` call that made it (it is created only there, here and in
    ///   ``JSONDocument``), and every read goes through an index checked against `bytes.count` first.
    let bytes: UnsafeBufferPointer<UInt8>
    private let refusesDuplicateKeys: Bool
    var index = 0
    /// The room an object's members and a non-empty array's elements start with: grown from empty, a movie
    /// detail's 27 members took six allocations. Only in documents up to `reservingLimit` bytes (an upstream
    /// answer is a few kilobytes), so that a large body of tiny objects cannot make the reserved room many times
    /// its own size.
    private let initialMembers: Int
    private let initialElements: Int
    private static let reservingLimit = 64 * 1024

    init(_ bytes: UnsafeBufferPointer<UInt8>, refusesDuplicateKeys: Bool) {
        self.bytes = bytes
        self.refusesDuplicateKeys = refusesDuplicateKeys
        let reserves = bytes.count <= Self.reservingLimit
        self.initialMembers = reserves ? 8 : 0
        self.initialElements = reserves ? 4 : 0
    }

    /// The document in `bytes`, or `nil` when it is not exactly one strict JSON value (surrounding whitespace
    /// allowed).
    ///
    /// - Parameter refusesDuplicateKeys: Refuse an object that names a key twice, instead of keeping the last.
    public static func parse(_ bytes: some Collection<UInt8>, refusesDuplicateKeys: Bool = false) -> JSONValue? {
        // Contiguous bytes (an array, a slice of one) are read in place; anything else is copied once.
        if let value = bytes.withContiguousStorageIfAvailable({
            Self.parse(buffer: $0, refusesDuplicateKeys: refusesDuplicateKeys)
        }) {
            return value
        }
        return Array(bytes).withUnsafeBufferPointer {
            Self.parse(buffer: $0, refusesDuplicateKeys: refusesDuplicateKeys)
        }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>, refusesDuplicateKeys: Bool) -> JSONValue? {
        var reader = StrictJSON(buffer, refusesDuplicateKeys: refusesDuplicateKeys)
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { reader.index = 3 }
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.index == reader.bytes.count ? value : nil
    }

    mutating func skipWhitespace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case 0x20, 0x09, 0x0A, 0x0D: self.index += 1
            default: return
            }
        }
    }

    var current: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    private mutating func value(depth: Int) -> JSONValue? {
        guard depth < Self.maxDepth else { return nil }
        self.skipWhitespace()
        guard let byte = self.current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return self.object(depth: depth)
        case UInt8(ascii: "["): return self.array(depth: depth)
        case UInt8(ascii: "\""): return self.string().map(JSONValue.string)
        case UInt8(ascii: "t"): return self.literal("true", .bool(true))
        case UInt8(ascii: "f"): return self.literal("false", .bool(false))
        case UInt8(ascii: "n"): return self.literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return self.number()
        default: return nil
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard self.index + count <= self.bytes.count else { return nil }
        for offset in 0..<count where self.bytes[self.index + offset] != word.utf8Start[offset] { return nil }
        self.index += count
        return value
    }

    private mutating func object(depth: Int) -> JSONValue? {
        self.index += 1  // {
        self.skipWhitespace()
        if self.current == UInt8(ascii: "}") {
            self.index += 1
            return .object(JSONObject())
        }
        var members: [JSONObject.Element] = []
        members.reserveCapacity(self.initialMembers)
        // Keys are checked for duplicates one by one while the object is small, through a dictionary of their
        // places past `JSONObject.indexThreshold` members (so a hostile object of many keys, repeated or not, costs
        // no more than linear time).
        var places: [String: Int]?
        while true {
            self.skipWhitespace()
            guard self.current == UInt8(ascii: "\""), let key = self.string() else { return nil }
            self.skipWhitespace()
            guard self.current == UInt8(ascii: ":") else { return nil }
            self.index += 1
            guard let value = self.value(depth: depth + 1) else { return nil }
            if places == nil, members.count >= JSONObject.indexThreshold {
                places = JSONObject.positions(of: members)
            }
            let duplicate: Int?
            if places != nil {
                duplicate = places![key]
                if duplicate == nil { places![key] = members.count }
            } else {
                duplicate = members.firstIndex { JSONObject.same($0.key, key) }
            }
            if let duplicate {
                // A key named twice keeps its last value, or refuses the document.
                if self.refusesDuplicateKeys { return nil }
                members[duplicate].value = value
            } else {
                members.append((key: key, value: value))
            }
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "}"):
                self.index += 1
                return .object(JSONObject(uniqueMembers: members, positions: places))
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        self.index += 1  // [
        var elements: [JSONValue] = []
        self.skipWhitespace()
        if self.current == UInt8(ascii: "]") {
            self.index += 1
            return .array(elements)
        }
        elements.reserveCapacity(self.initialElements)
        while true {
            guard let value = self.value(depth: depth + 1) else { return nil }
            elements.append(value)
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "]"):
                self.index += 1
                return .array(elements)
            default: return nil
            }
        }
    }

    mutating func string() -> String? {
        self.index += 1  // opening quote
        let start = self.index
        // Most strings have no escape: made from their bytes in place, validated once. ASCII bytes are valid
        // UTF-8 as they are, and `String(decoding:as:)` takes them without the generic validating path.
        var bits: UInt8 = 0
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                let contents = UnsafeBufferPointer(rebasing: self.bytes[start..<self.index - 1])
                if bits < 0x80 { return String(decoding: contents, as: UTF8.self) }
                return String(validating: contents, as: UTF8.self)
            case UInt8(ascii: "\\"):
                return self.escapedString(from: start)
            case 0x00..<0x20:
                return nil
            default:
                bits |= byte
                self.index += 1
            }
        }
        return nil
    }

    /// The rest of a string from its first escape (at `index`), the bytes from `start` up to it already read.
    private mutating func escapedString(from start: Int) -> String? {
        var buffer = Array(UnsafeBufferPointer(rebasing: self.bytes[start..<self.index]))
        while let byte = self.current {
            self.index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = self.current else { return nil }
                self.index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = self.unicodeEscape() else { return nil }
                    UTF8.encode(scalar) { buffer.append($0) }
                default: return nil
                }
            case 0x00..<0x20:
                return nil
            default:
                buffer.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (the `\u` already read), joining a surrogate pair.
    mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = self.hex4() else { return nil }
        if (0xD800...0xDBFF).contains(high) {
            guard self.current == UInt8(ascii: "\\"), self.index + 1 < self.bytes.count,
                self.bytes[self.index + 1] == UInt8(ascii: "u")
            else { return nil }
            self.index += 2
            guard let low = self.hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        }
        return Unicode.Scalar(high)
    }

    private mutating func hex4() -> UInt32? {
        guard self.index + 4 <= self.bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in self.bytes[self.index..<self.index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        self.index += 4
        return value
    }

    mutating func number() -> JSONValue? {
        let start = self.index
        var isInteger = true
        let isNegative = self.current == UInt8(ascii: "-")
        if isNegative { self.index += 1 }
        // The integer part's magnitude, accumulated as it is read (`nil` once it overflows).
        var magnitude: UInt64? = 0
        if self.current == UInt8(ascii: "0") {
            self.index += 1
        } else {
            let digitsStart = self.index
            while let byte = self.current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if let value = magnitude {
                    let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                    magnitude = overflow1 || overflow2 ? nil : sum
                }
                self.index += 1
            }
            guard self.index > digitsStart else { return nil }
        }
        if self.current == UInt8(ascii: ".") {
            isInteger = false
            self.index += 1
            guard self.digits() > 0 else { return nil }
        }
        if self.current == UInt8(ascii: "e") || self.current == UInt8(ascii: "E") {
            isInteger = false
            self.index += 1
            if self.current == UInt8(ascii: "+") || self.current == UInt8(ascii: "-") { self.index += 1 }
            guard self.digits() > 0 else { return nil }
        }
        // An integer that fits Int64 (Int64.min included); anything else is read as a Double, as before.
        if isInteger, let magnitude {
            if !isNegative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            if isNegative, magnitude <= UInt64(Int64.max) { return .integer(-Int64(magnitude)) }
            if isNegative, magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: self.bytes[start..<self.index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { return nil }
        return .number(double)
    }

    private mutating func digits() -> Int {
        var count = 0
        while let byte = self.current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            self.index += 1
            count += 1
        }
        return count
    }
}
