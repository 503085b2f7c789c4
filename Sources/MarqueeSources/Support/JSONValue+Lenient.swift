import MarqueeCore

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

    /// An ISO date `YYYY-MM-DD` from `YYYY-MM-DD`, `YYYYMMDD` or the start of an ISO timestamp; `nil` for blanks
    /// and anything that is not a plausible calendar date.
    var isoDate: String? {
        guard let text = self.trimmedText else { return nil }
        return ISODate.normalized(text)
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
