import MarqueeCore
import MarqueeJSON

/// Lenient reading of upstream JSON: upstreams send numbers as strings (KOFIC), integers where floats are
/// expected (TMDB's `vote_average: 6`), empty strings or a single space for "missing", and leave keys out. These
/// accessors turn all of that into Swift optionals; only the structure an adapter depends on is checked strictly.
extension JSONValue {
    /// The member `key` of an object; `nil` for a missing key, JSON `null` or a non-object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self, let value = object[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    /// The object's members, if this is an object.
    var objectValue: JSONObject? {
        guard case .object(let object) = self else { return nil }
        return object
    }

    /// The elements, if this is an array.
    var arrayValue: [JSONValue]? {
        guard case .array(let array) = self else { return nil }
        return array
    }

    /// The string as sent, if this is a string that is not blank; `nil` for `""`, `" "` and non-strings.
    var text: String? {
        guard case .string(let string) = self, !string.isBlank else { return nil }
        return string
    }

    /// The string trimmed of surrounding whitespace, if this is a string that is not blank.
    var trimmedText: String? {
        guard case .string(let string) = self else { return nil }
        let trimmed = string.trimmingASCIIWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// An integer from an integer, an integral number, or a string of digits (sign and thousands separators
    /// tolerated: `"-15"`, `"1,234"`).
    var int: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .number(let value):
            guard value.rounded() == value, abs(value) < 9.0e15 else { return nil }
            return Int64(value)
        case .string(let string):
            return Int64(string.trimmingASCIIWhitespace().replacing(",", with: ""))
        default:
            return nil
        }
    }

    /// A number from a number, an integer or a numeric string (`"-15.3"`).
    var double: Double? {
        switch self {
        case .integer(let value):
            return Double(value)
        case .number(let value):
            return value
        case .string(let string):
            guard let value = Double(string.trimmingASCIIWhitespace().replacing(",", with: "")), value.isFinite else {
                return nil
            }
            return value
        default:
            return nil
        }
    }

    /// A boolean from a boolean, or from `"true"`/`"false"`/`"Y"`/`"N"`.
    var bool: Bool? {
        switch self {
        case .bool(let value): return value
        case .string(let string):
            switch string.trimmingASCIIWhitespace().lowercased() {
            case "true", "y", "yes": return true
            case "false", "n", "no": return false
            default: return nil
            }
        default: return nil
        }
    }

    var isObject: Bool { self.objectValue != nil }
}

/// What the adapters' parsers read from an upstream answer, the same way from a `JSONValue` and from a value of a
/// ``JSONDocument`` (which reads a large answer without building it).
protocol LenientJSON {
    associatedtype Elements: Sequence where Elements.Element == Self
    /// The member `key` of an object; `nil` for a missing key, JSON `null` or a non-object.
    subscript(key: String) -> Self? { get }
    /// The elements, if this is an array.
    var arrayValue: Elements? { get }
    /// Whether this is an object.
    var isObject: Bool { get }
    /// The string as sent, if this is a string that is not blank.
    var text: String? { get }
    /// The string trimmed of surrounding whitespace, if this is a string that is not blank.
    var trimmedText: String? { get }
    /// An integer from an integer, an integral number, or a string of digits.
    var int: Int64? { get }
    /// A number from a number, an integer or a numeric string.
    var double: Double? { get }
    /// A boolean from a boolean, or from `"true"`/`"false"`/`"Y"`/`"N"`.
    var bool: Bool? { get }
    /// Writes ``trimmedText`` (`trimmed`) or ``text`` as the member `key` (`null` for `nil`).
    func writeText(_ key: StaticString, trimmed: Bool, to writer: inout JSONWriter)
}

extension LenientJSON {
    func writeText(_ key: StaticString, trimmed: Bool, to writer: inout JSONWriter) {
        writer.write(key, trimmed ? self.trimmedText : self.text)
    }
}

extension JSONWriter {
    /// `value?.trimmedText` as the member `key`.
    mutating func writeTrimmedText(_ key: StaticString, _ value: (some LenientJSON)?) {
        if let value { value.writeText(key, trimmed: true, to: &self) } else { self.write(key, nil as String?) }
    }

    /// `value?.text` as the member `key`.
    mutating func writeText(_ key: StaticString, _ value: (some LenientJSON)?) {
        if let value { value.writeText(key, trimmed: false, to: &self) } else { self.write(key, nil as String?) }
    }
}

extension LenientJSON {
    /// An ISO date `YYYY-MM-DD` from `YYYY-MM-DD`, `YYYYMMDD` or the start of an ISO timestamp; `nil` for blanks
    /// and anything that is not a plausible calendar date.
    var isoDate: String? {
        guard let text = self.trimmedText else { return nil }
        return ISODate.normalized(text)
    }
}

extension JSONValue: LenientJSON {}

/// A document's values read as the `JSONValue` they stand for: a scalar is made into one (a string is made only
/// when read), so every lenient reading is `JSONValue`'s own.
extension JSONDocument.Value: LenientJSON {
    subscript(key: String) -> JSONDocument.Value? {
        guard let value = self[member: key], value.kind != .null else { return nil }
        return value
    }

    var arrayValue: JSONDocument.Elements? { self.elements }
    var isObject: Bool { self.kind == .object }
    var text: String? { self.scalar?.text }
    var trimmedText: String? { self.scalar?.trimmedText }
    var int: Int64? { self.scalar?.int }
    var double: Double? { self.scalar?.double }
    var bool: Bool? { self.scalar?.bool }

    /// A string that starts (and, to be trimmed, ends) with a visible ASCII character and holds no escape is
    /// its text, trimmed or not: its bytes are written as they are, without making its `String` or looking for
    /// characters to escape. Any other takes `text` or `trimmedText`.
    func writeText(_ key: StaticString, trimmed: Bool, to writer: inout JSONWriter) {
        let visible: ClosedRange<UInt8> = 0x21...0x7E
        let written = self.withUnescapedBytes { bytes -> Bool in
            guard let first = bytes.first, let last = bytes.last, visible.contains(first),
                !trimmed || visible.contains(last)
            else { return false }
            writer.write(key, unescapedString: bytes)
            return true
        }
        if written != true { writer.write(key, trimmed ? self.trimmedText : self.text) }
    }
}

/// Building record data: `nil` becomes JSON `null`.
extension JSONValue {
    /// A string value, or `null`.
    static func of(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// An integer value, or `null`.
    static func of(_ value: Int64?) -> JSONValue { value.map(JSONValue.integer) ?? .null }
    /// A number value, or `null`.
    static func of(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
    /// A boolean value, or `null`.
    static func of(_ value: Bool?) -> JSONValue { value.map(JSONValue.bool) ?? .null }
    /// An array of strings.
    static func of(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
    /// An array of integers.
    static func of(_ values: [Int64]) -> JSONValue { .array(values.map(JSONValue.integer)) }
}
