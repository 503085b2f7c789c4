/// A JSON document read once, strictly, into a flat list of tokens over its bytes, for reading a few members of a
/// large upstream answer.
///
/// ``StrictJSON`` builds a ``JSONValue`` of every member: a `String` of each key and string, an array of each
/// object and list, all of it freed again once the few members an adapter reads were copied out. A document
/// instead notes where each value lies (one token a value, in one array) and makes a `String` only of what is
/// read. Built with `StrictJSON`, a movie detail's tree costs a quarter of the fetch handler's CPU (`make
/// bench-fetch`), most of it in strings and arrays freed unread.
///
/// It accepts and refuses exactly what `StrictJSON.parse(_:)` does, with the same reading:
/// - the same grammar (RFC 8259), nesting limit (``StrictJSON/maxDepth``), UTF-8 validation and byte order mark;
/// - integers that fit `Int64` are integers, other numbers `Double`s, infinite ones refused;
/// - a key named twice in an object keeps its last value (``Value/subscript(member:)`` finds the last one).
///
/// ``Value/jsonValue`` builds the `JSONValue` `StrictJSON` would have (the tests compare the two readings).
public final class JSONDocument: Sendable {
    /// The document's bytes.
    public let bytes: [UInt8]
    /// One token a value, in document order: a container's members follow it, each object member as its key's
    /// token and then its value's.
    private let tokens: [Token]

    /// What a value is.
    public enum Kind: UInt8, Sendable {
        case null, bool, integer, number, string, array, object
    }

    /// 24 bytes: offsets and indexes fit 32 bits, as documents are smaller than 4 GiB (``init(_:)``).
    struct Token: Sendable {
        /// A string's contents: from the byte after its opening quote to its closing quote.
        var start: UInt32 = 0
        var end: UInt32 = 0
        /// The index of the token after this value and everything in it.
        var next: UInt32
        var kind: Kind
        /// A string that holds an escape (its text must be decoded; otherwise it is its bytes).
        var isEscaped = false
        /// An object that may name a key twice (or has too many members, or escaped keys, to tell cheaply): a
        /// lookup reads all its members for the last one. Otherwise it stops at the first.
        var mayRepeatKeys = false
        /// A boolean's 0 or 1, an integer's bit pattern, a number's bits, a container's count of members, an
        /// unescaped key's ``JSONDocument/fingerprint(_:)``.
        var payload: UInt64 = 0
    }

    /// Reads `bytes`; `nil` when they are not exactly one strict JSON value (surrounding whitespace allowed), as
    /// `StrictJSON.parse(_:)` would refuse them, or 4 GiB or more (far past any body the fetch stage accepts).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count < Int(UInt32.max),
            let tokens = bytes.withUnsafeBufferPointer({ Builder.tokens(of: $0) })
        else { return nil }
        self.bytes = bytes
        self.tokens = tokens
    }

    /// The document's value.
    public var root: Value { Value(document: self, index: 0) }

    /// A value in a document.
    public struct Value: Sendable {
        public let document: JSONDocument
        let index: Int

        private var token: Token { self.document.tokens[self.index] }

        public var kind: Kind { self.token.kind }

        /// The member `key` of an object (the last, if the key is named twice); `nil` for a missing key or a
        /// value that is not an object. A `null` member is a value of kind ``Kind/null``.
        public subscript(member key: String) -> Value? {
            var key = key
            return key.withUTF8 { self.document.lastMember(of: self.index, named: $0) }.map {
                Value(document: self.document, index: $0)
            }
        }

        /// An array's elements, in order; `nil` for a value that is not an array.
        public var elements: Elements? {
            let token = self.token
            guard token.kind == .array else { return nil }
            return Elements(document: self.document, first: self.index + 1, end: Int(token.next), count: Int(token.payload))
        }

        /// An object's members, in document order (a key named twice is there twice); `nil` for a value that is
        /// not an object.
        public var members: [(key: String, value: Value)]? {
            let token = self.token
            guard token.kind == .object else { return nil }
            var members: [(key: String, value: Value)] = []
            members.reserveCapacity(Int(token.payload))
            var keyIndex = self.index + 1
            while keyIndex < token.next {
                members.append((self.document.string(at: keyIndex), Value(document: self.document, index: keyIndex + 1)))
                keyIndex = Int(self.document.tokens[keyIndex + 1].next)
            }
            return members
        }

        /// A string's text; `nil` for a value that is not a string.
        public var string: String? {
            self.token.kind == .string ? self.document.string(at: self.index) : nil
        }

        /// Calls `body` with a string's bytes as they stand in the document, when it holds no escape (its text is
        /// exactly those bytes: valid UTF-8, no quote, backslash or control character, so written as a JSON
        /// string without a change); `nil` for other strings and other values.
        public func withUnescapedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
            let token = self.token
            guard token.kind == .string, !token.isEscaped else { return nil }
            return try self.document.bytes.withUnsafeBufferPointer {
                try body(UnsafeBufferPointer(rebasing: $0[Int(token.start)..<Int(token.end)]))
            }
        }

        /// The value when it is not a container (`null`, a boolean, a number or a string), as a `JSONValue`;
        /// `nil` for arrays and objects.
        public var scalar: JSONValue? {
            let token = self.token
            switch token.kind {
            case .null: return .null
            case .bool: return .bool(token.payload != 0)
            case .integer: return .integer(Int64(bitPattern: token.payload))
            case .number: return .number(Double(bitPattern: token.payload))
            case .string: return .string(self.document.string(at: self.index))
            case .array, .object: return nil
            }
        }

        /// The value as `StrictJSON.parse(_:)` reads it.
        public var jsonValue: JSONValue {
            if let scalar = self.scalar { return scalar }
            if let elements = self.elements { return .array(elements.map(\.jsonValue)) }
            var object = JSONObject()
            for (key, value) in self.members ?? [] { object[key] = value.jsonValue }
            return .object(object)
        }
    }

    /// An array's elements.
    public struct Elements: Sequence, Sendable {
        let document: JSONDocument
        let first: Int
        let end: Int
        /// How many elements.
        public let count: Int

        public struct Iterator: IteratorProtocol {
            let document: JSONDocument
            var index: Int
            let end: Int

            public mutating func next() -> Value? {
                guard self.index < self.end else { return nil }
                let value = Value(document: self.document, index: self.index)
                self.index = Int(self.document.tokens[self.index].next)
                return value
            }
        }

        public func makeIterator() -> Iterator { Iterator(document: self.document, index: self.first, end: self.end) }
        public var underestimatedCount: Int { self.count }
    }

    /// The index of the value of the last member of the object at `object` whose key reads `wanted`, byte for
    /// byte once decoded; `nil` if there is none or it is no object. For the ASCII keys adapters look up that is
    /// how `JSONObject` compares keys (an ASCII text is canonically equivalent only to itself at its length).
    private func lastMember(of object: Int, named wanted: UnsafeBufferPointer<UInt8>) -> Int? {
        self.tokens.withUnsafeBufferPointer { tokens in
            self.bytes.withUnsafeBufferPointer { bytes in
                guard tokens[object].kind == .object else { return nil }
                let end = Int(tokens[object].next)
                let readsAll = tokens[object].mayRepeatKeys
                let print = Self.fingerprint(wanted)
                var found: Int?
                var keyIndex = object + 1
                while keyIndex < end {
                    let key = tokens[keyIndex]
                    if key.isEscaped {
                        var text = self.string(at: keyIndex)
                        if text.withUTF8({ $0.elementsEqual(wanted) }) {
                            found = keyIndex + 1
                            if !readsAll { break }
                        }
                    } else if key.payload == print, Int(key.end - key.start) == wanted.count {
                        var offset = min(7, wanted.count)  // the first seven are the fingerprint's
                        let start = Int(key.start)
                        while offset < wanted.count, bytes[start + offset] == wanted[offset] { offset += 1 }
                        if offset == wanted.count {
                            found = keyIndex + 1
                            if !readsAll { break }
                        }
                    }
                    keyIndex = Int(tokens[keyIndex + 1].next)
                }
                return found
            }
        }
    }

    /// A key's length and first seven bytes in one word: most keys of an object differ from the one looked for
    /// there, so a lookup passes over them with one comparison each.
    static func fingerprint(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var word = UInt64(min(key.count, 255)) << 56
        for offset in 0..<min(key.count, 7) { word |= UInt64(key[offset]) << (8 * offset) }
        return word
    }

    /// The text of the string token at `index`.
    private func string(at index: Int) -> String {
        let token = self.tokens[index]
        return self.bytes.withUnsafeBufferPointer { bytes in
            // Checked when the document was read: valid UTF-8, and escapes that decode.
            if !token.isEscaped {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)]), as: UTF8.self)
            }
            return Self.decodeEscapes(bytes, from: Int(token.start), to: Int(token.end))
        }
    }

    /// The text of an escaped string's contents (checked when the document was read), decoded straight into the
    /// string's storage: an escape is never shorter than what it stands for (`\n` one byte for two, `\u00E9` two
    /// for six, a surrogate pair four for twelve). A review's text with line breaks is one such string.
    private static func decodeEscapes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> String {
        var reader = StrictJSON(bytes, refusesDuplicateKeys: false)
        var failed = false
        let text = String(unsafeUninitializedCapacity: end - start) { output in
            var read = start
            var written = 0
            while read < end {
                let byte = bytes[read]
                guard byte == UInt8(ascii: "\\"), read + 1 < end else {
                    output[written] = byte
                    written += 1
                    read += 1
                    continue
                }
                let escape = bytes[read + 1]
                read += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output[written] = escape
                case UInt8(ascii: "b"): output[written] = 0x08
                case UInt8(ascii: "f"): output[written] = 0x0C
                case UInt8(ascii: "n"): output[written] = 0x0A
                case UInt8(ascii: "r"): output[written] = 0x0D
                case UInt8(ascii: "t"): output[written] = 0x09
                case UInt8(ascii: "u"):
                    reader.index = read
                    guard let scalar = reader.unicodeEscape(), reader.index <= end else {
                        failed = true
                        return 0
                    }
                    read = reader.index
                    UTF8.encode(scalar) { unit in
                        output[written] = unit
                        written += 1
                    }
                    continue
                default:
                    failed = true
                    return 0
                }
                written += 1
            }
            return written
        }
        if failed {
            // Not reachable for a string the document checked; StrictJSON's own decoding says what it is.
            assertionFailure("a string of a JSONDocument does not decode")
            reader.index = start - 1
            return reader.string() ?? ""
        }
        return text
    }

    /// Reads a document's tokens with `StrictJSON`'s scanner.
    private struct Builder {
        var reader: StrictJSON
        var tokens: [Token] = []
        /// The key tokens of the objects being read, innermost last (one array for all, not one an object).
        var keys: [Int] = []

        static func tokens(of bytes: UnsafeBufferPointer<UInt8>) -> [Token]? {
            var builder = Builder(reader: StrictJSON(bytes, refusesDuplicateKeys: false))
            // About a token for every 12 bytes of an upstream answer: reserved once, bounded for large bodies.
            builder.tokens.reserveCapacity(min(bytes.count / 12 + 4, 16 * 1024))
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { builder.reader.index = 3 }
            guard builder.value(depth: 0) else { return nil }
            builder.reader.skipWhitespace()
            return builder.reader.index == bytes.count ? builder.tokens : nil
        }

        private mutating func append(_ kind: Kind, payload: UInt64 = 0) {
            self.tokens.append(Token(next: UInt32(self.tokens.count + 1), kind: kind, payload: payload))
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < StrictJSON.maxDepth else { return false }
            self.reader.skipWhitespace()
            guard let byte = self.reader.current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return self.object(depth: depth)
            case UInt8(ascii: "["): return self.array(depth: depth)
            case UInt8(ascii: "\""): return self.string()
            case UInt8(ascii: "t"):
                guard self.reader.literal("true", .bool(true)) != nil else { return false }
                self.append(.bool, payload: 1)
            case UInt8(ascii: "f"):
                guard self.reader.literal("false", .bool(false)) != nil else { return false }
                self.append(.bool, payload: 0)
            case UInt8(ascii: "n"):
                guard self.reader.literal("null", .null) != nil else { return false }
                self.append(.null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                switch self.reader.number() {
                case .integer(let value)?: self.append(.integer, payload: UInt64(bitPattern: value))
                case .number(let value)?: self.append(.number, payload: value.bitPattern)
                default: return false
                }
            default: return false
            }
            return true
        }

        /// An object: its token, then each member's key and value; the object's `next` and count set at its end.
        private mutating func object(depth: Int) -> Bool {
            let at = self.tokens.count
            self.append(.object)
            self.reader.index += 1  // {
            self.reader.skipWhitespace()
            if self.reader.current == UInt8(ascii: "}") {
                self.reader.index += 1
                return true
            }
            var count: UInt64 = 0
            let firstKey = self.keys.count
            while true {
                self.reader.skipWhitespace()
                guard self.reader.current == UInt8(ascii: "\""), self.string() else { return false }
                let key = self.tokens.count - 1
                if !self.tokens[key].isEscaped {
                    let token = self.tokens[key]
                    self.tokens[key].payload = JSONDocument.fingerprint(
                        UnsafeBufferPointer(rebasing: self.reader.bytes[Int(token.start)..<Int(token.end)])
                    )
                }
                self.keys.append(key)
                self.reader.skipWhitespace()
                guard self.reader.current == UInt8(ascii: ":") else { return false }
                self.reader.index += 1
                guard self.value(depth: depth + 1) else { return false }
                count += 1
                self.reader.skipWhitespace()
                switch self.reader.current {
                case UInt8(ascii: ","): self.reader.index += 1
                case UInt8(ascii: "}"):
                    self.reader.index += 1
                    self.tokens[at].next = UInt32(self.tokens.count)
                    self.tokens[at].payload = count
                    self.tokens[at].mayRepeatKeys = self.mayRepeat(self.keys[firstKey...])
                    self.keys.removeSubrange(firstKey...)
                    return true
                default: return false
                }
            }
        }

        /// Whether an object's keys (their tokens) may name one twice: compared by fingerprint, and byte for byte
        /// where two are alike. An escaped key, or more than 32 keys, count as may.
        private func mayRepeat(_ keys: ArraySlice<Int>) -> Bool {
            guard keys.count <= 32 else { return true }
            for (offset, key) in keys.enumerated() {
                let token = self.tokens[key]
                if token.isEscaped { return true }
                for other in keys.prefix(offset) where self.tokens[other].payload == token.payload {
                    let otherToken = self.tokens[other]
                    let bytes = self.reader.bytes
                    if bytes[Int(token.start)..<Int(token.end)].elementsEqual(bytes[Int(otherToken.start)..<Int(otherToken.end)]) {
                        return true
                    }
                }
            }
            return false
        }

        private mutating func array(depth: Int) -> Bool {
            let at = self.tokens.count
            self.append(.array)
            self.reader.index += 1  // [
            self.reader.skipWhitespace()
            if self.reader.current == UInt8(ascii: "]") {
                self.reader.index += 1
                return true
            }
            var count: UInt64 = 0
            while true {
                guard self.value(depth: depth + 1) else { return false }
                count += 1
                self.reader.skipWhitespace()
                switch self.reader.current {
                case UInt8(ascii: ","): self.reader.index += 1
                case UInt8(ascii: "]"):
                    self.reader.index += 1
                    self.tokens[at].next = UInt32(self.tokens.count)
                    self.tokens[at].payload = count
                    return true
                default: return false
                }
            }
        }

        /// A string (at its opening quote), checked as `StrictJSON` checks it but not made: no control
        /// characters, valid UTF-8, escapes that decode (`\u` ones through `StrictJSON`'s own reading).
        private mutating func string() -> Bool {
            let bytes = self.reader.bytes
            var index = self.reader.index + 1
            let start = index
            var isEscaped = false
            while true {
                // Eight bytes at a time while none is a quote, a backslash, a control character or non-ASCII.
                while index + 8 <= bytes.count,
                    !Self.needsAttention(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
                {
                    index += 8
                }
                guard index < bytes.count else { return false }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    self.tokens.append(
                        Token(
                            start: UInt32(start), end: UInt32(index), next: UInt32(self.tokens.count + 1), kind: .string,
                            isEscaped: isEscaped
                        )
                    )
                    self.reader.index = index + 1
                    return true
                case UInt8(ascii: "\\"):
                    // Checked here, decoded only when read. An escape decodes to whole UTF-8 sequences, so the
                    // bytes around it are valid exactly when they are valid on their own.
                    guard index + 1 < bytes.count else { return false }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 2
                    case UInt8(ascii: "u"):
                        self.reader.index = index + 2
                        guard self.reader.unicodeEscape() != nil else { return false }
                        index = self.reader.index
                    default:
                        return false
                    }
                    isEscaped = true
                case 0x00..<0x20:
                    return false
                case 0x20..<0x80:
                    index += 1
                default:
                    guard let length = UTF8Check.sequenceLength(bytes, at: index) else { return false }
                    index += length
                }
            }
        }

        /// Whether any of eight bytes is a quote, a backslash, below 0x20 or 0x80 and above (the classic
        /// "has a zero byte" test, `(x - 0x01…) & ~x & 0x80…`, is exact as an answer for the eight together).
        @inline(__always)
        private static func needsAttention(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            if word & highs != 0 { return true }
            let control = (word &- ones &* 0x20) & ~word & highs
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            return (control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)) != 0
        }
    }
}

/// UTF-8 validation without making a string (the well-formed byte sequences of the Unicode Standard, table 3-7:
/// no overlong forms, no surrogates, nothing past U+10FFFF), as `String(validating:as:)` checks.
enum UTF8Check {
    /// The length of the well-formed sequence that starts at `index` with a byte of 0x80 or more; `nil` when it
    /// is not one.
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        let second = bytes[index + 1]
        guard second >= low, second <= high else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}
