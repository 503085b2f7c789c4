/// A JSON document as a value, so payload decoding can check every field itself and say exactly which one is
/// wrong (Codable's errors name coding paths, not what the operator wrote).
///
/// ``JSONDocument/parse(_:refusesDuplicateKeys:)`` reads one strictly; ``encoded()`` writes one through
/// ``JSONWriter``.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value as compact JSON bytes with sorted keys (slashes unescaped; control characters, quotes and
    /// backslashes escaped): the form every payload and record has on the wire.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.write(self)
        return writer.finish()
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: - JSONValue + Codable

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value.dictionary)
        }
    }
}
