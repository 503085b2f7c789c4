
/// A JSON document as a value, so payload decoding can check every field itself and say exactly which one is
/// wrong (Codable's errors name coding paths, not what the operator wrote).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Parses UTF-8 JSON, strictly (RFC 8259: no trailing commas, no comments, nesting at most
    /// ``StrictJSON/maxDepth``).
    ///
    /// - Throws: A ``PayloadError`` with code ``PayloadError/Code-swift.struct/notJSON`` for bytes that are not
    ///   UTF-8 JSON.
    public static func parse(_ bytes: some Collection<UInt8>) throws(PayloadError) -> JSONValue {
        // A document the strict reader accepts is UTF-8 (its strings are validated, everything else must be
        // ASCII), so the whole payload is checked for UTF-8 only when it was refused, to say why.
        guard let value = StrictJSON.parse(bytes, refusesDuplicateKeys: true) else {
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw PayloadError(.notJSON, field: nil, "the payload is not UTF-8")
            }
            // Only on the way out: say which of the two it was.
            if StrictJSON.parse(bytes) != nil {
                throw PayloadError(.notJSON, field: nil, "the payload names a key twice in one object")
            }
            throw PayloadError(.notJSON, field: nil, "the payload is not JSON")
        }
        return value
    }

    /// The value as compact JSON bytes with sorted keys (slashes unescaped; control characters, quotes and
    /// backslashes escaped), written directly rather than through `JSONEncoder`, which costs a stage several
    /// times more per record.
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        self.write(to: &output)
        return output
    }

    /// Appends the value as compact JSON (as ``encoded()`` writes it).
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): output.append(contentsOf: String(value).utf8)
        case .number(let value):
            // A JSONValue never holds NaN or infinity (JSON has neither); write null if one is built by hand.
            output.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
        case .string(let value): Self.write(string: value, to: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members): Self.write(object: members, to: &output)
        }
    }

    /// Appends an object with its keys sorted (as ``encoded()`` writes it).
    static func write(object: JSONObject, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for (index, member) in object.sortedMembers.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            Self.write(string: member.key, to: &output)
            output.append(UInt8(ascii: ":"))
            member.value.write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    static func write(string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        // Over the contiguous UTF-8 bytes: runs that need no escape are appended whole.
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                Self.writeEscape(byte, to: &output)
                runStart = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func writeEscape(_ byte: UInt8, to output: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [backslash, UInt8(ascii: "\"")])
        case backslash: output.append(contentsOf: [backslash, backslash])
        case 0x0A: output.append(contentsOf: [backslash, UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [backslash, UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [backslash, UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            output.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0x0F)])
        }
    }

    /// A short name of the value's JSON type, for error messages.
    var typeName: String {
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
