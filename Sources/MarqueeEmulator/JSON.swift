import MarqueeJSON

/// A JSON value whose objects keep their key order, serialized deterministically through ``JSONWriter``.
///
/// The emulator writes responses with the upstream's own key order (TMDB, KOFIC, Kakao and Open Library each
/// have theirs), and the same catalogue must give byte-identical bodies, so Foundation's unordered dictionaries
/// are not used for output. Objects are lists of pairs built in place, in the order the upstream writes them.
public enum JSON: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer, written without a decimal point (TMDB's `vote_average: 6`).
    case int(Int)
    /// A floating-point number, written in Swift's shortest round-trip form (`9.0`, `1234.567`).
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object with its keys in order.
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    /// The value as compact UTF-8 JSON, each object's keys in the order given (``JSONWriter``).
    public func serialized() -> [UInt8] {
        var writer = JSONWriter(capacity: 1024, keyOrder: .asGiven)
        self.write(to: &writer)
        return writer.finish()
    }

    /// Writes the value as the next one of `writer`.
    func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.writeNull()
        case .bool(let value): writer.write(bool: value)
        case .int(let value): writer.write(integer: Int64(value))
        case .double(let value): writer.write(number: value)
        case .string(let value): writer.write(string: value)
        case .array(let values):
            writer.beginArray()
            for value in values { value.write(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for (key, value) in members {
                writer.key(key)
                value.write(to: &writer)
            }
            writer.endObject()
        }
    }
}

extension JSONValue {
    /// A string as a list of one, or an array of strings; `nil` for anything else (a `POST /_control` field that
    /// takes one name or several).
    var strings: [String]? {
        switch self {
        case .string(let value): return [value]
        case .array(let values):
            let strings = values.compactMap { if case .string(let value) = $0 { value } else { nil } }
            return strings.count == values.count ? strings : nil
        default: return nil
        }
    }

    /// An integer or a number as a `Double`; `nil` for anything else.
    var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}

extension JSON {
    /// A string, or `null` when `value` is nil.
    static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    /// An array of strings.
    static func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }
}
