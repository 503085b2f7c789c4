@testable import MarqueeJSON

// Test oracles: a JSON reader and writer written for clarity, not speed (a byte array, a dictionary an object, one
// byte at a time), which the one reader and writer must agree with (JSONReaderEquivalenceTests,
// JSONDocumentTests).

/// The reader as it was.
struct ReferenceStrictJSON {
    /// Nesting deeper than this is refused, so a hostile body cannot exhaust the stack.
    static let maxDepth = 256

    private let bytes: [UInt8]
    private let refusesDuplicateKeys: Bool
    private var index = 0

    private init(_ bytes: [UInt8], refusesDuplicateKeys: Bool) {
        self.bytes = bytes
        self.refusesDuplicateKeys = refusesDuplicateKeys
    }

    /// The document in `bytes`, or `nil` when it is not exactly one strict JSON value (surrounding whitespace
    /// allowed).
    ///
    /// - Parameter refusesDuplicateKeys: Refuse an object that names a key twice, instead of keeping the last.
    static func parse(_ bytes: some Collection<UInt8>, refusesDuplicateKeys: Bool = false) -> JSONValue? {
        var reader = ReferenceStrictJSON(Array(bytes), refusesDuplicateKeys: refusesDuplicateKeys)
        if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.index == reader.bytes.count ? value : nil
    }

    private mutating func skipWhitespace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case 0x20, 0x09, 0x0A, 0x0D: self.index += 1
            default: return
            }
        }
    }

    private var current: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

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

    private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
        let utf8 = Array(word.utf8)
        guard self.index + utf8.count <= self.bytes.count,
            Array(self.bytes[self.index..<self.index + utf8.count]) == utf8
        else { return nil }
        self.index += utf8.count
        return value
    }

    private mutating func object(depth: Int) -> JSONValue? {
        self.index += 1  // {
        var members: [String: JSONValue] = [:]
        self.skipWhitespace()
        if self.current == UInt8(ascii: "}") {
            self.index += 1
            return .object(JSONObject(members))
        }
        while true {
            self.skipWhitespace()
            guard self.current == UInt8(ascii: "\""), let key = self.string() else { return nil }
            self.skipWhitespace()
            guard self.current == UInt8(ascii: ":") else { return nil }
            self.index += 1
            guard let value = self.value(depth: depth + 1) else { return nil }
            if members.updateValue(value, forKey: key) != nil, self.refusesDuplicateKeys { return nil }
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "}"):
                self.index += 1
                return .object(JSONObject(members))
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

    private mutating func string() -> String? {
        self.index += 1  // opening quote
        var buffer: [UInt8] = []
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
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
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
    private mutating func unicodeEscape() -> Unicode.Scalar? {
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

    private mutating func number() -> JSONValue? {
        let start = self.index
        var isInteger = true
        if self.current == UInt8(ascii: "-") { self.index += 1 }
        if self.current == UInt8(ascii: "0") {
            self.index += 1
        } else {
            guard self.digits() > 0 else { return nil }
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
        let text = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
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

/// The writer as it was.
enum ReferenceJSONWriter {
    static func encoded(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        Self.write(value, to: &output)
        return output
    }

    /// Appends the value as compact JSON (as ``encoded()`` writes it).
    static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
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
                Self.write(value, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.write(string: key, to: &output)
                output.append(UInt8(ascii: ":"))
                Self.write(members[key]!, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func write(string: String, to output: inout [UInt8]) {
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
}
