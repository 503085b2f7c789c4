/// A JSON value whose objects keep their key order, serialized deterministically.
///
/// The emulator writes responses with the upstream's own key order (TMDB, KOFIC, Kakao and Open Library each
/// have theirs), and the same catalogue must give byte-identical bodies, so Foundation's unordered dictionaries
/// are not used for output.
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

    /// The value as compact UTF-8 JSON.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        self.write(into: &out)
        return out
    }

    /// Appends the compact UTF-8 JSON form of this value to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let value):
            out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value):
            out.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                out.append(contentsOf: value.description.utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let value):
            Self.writeString(value, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.0, into: &out)
                out.append(UInt8(ascii: ":"))
                member.1.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(Self.hexDigits[Int(byte >> 4)])
                out.append(Self.hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON {
    /// A string, or `null` when `value` is nil.
    static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    /// An array of strings.
    static func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }
}
