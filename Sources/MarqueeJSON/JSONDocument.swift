/// The strict JSON reader (RFC 8259): payloads and upstream bodies alike, read once into a flat list of tokens
/// over their bytes.
///
/// Foundation's decoder on Linux accepts some invalid documents (a trailing comma after the last element, as in
/// hand-edited Kakao samples); a payload or an upstream body like that is damaged and must be refused, not
/// half-trusted. What is accepted:
/// - exactly one value (RFC 8259: no trailing commas, no comments), surrounding whitespace and a leading UTF-8 byte
///   order mark allowed, nesting at most ``maxDepth`` deep, strings of valid UTF-8;
/// - integers that fit `Int64` are integers, other numbers `Double`s, infinite ones refused;
/// - a key named twice in an object keeps its last value (in the place of its first), or refuses the document
///   (``parse(_:refusesDuplicateKeys:)``, for payloads: two readers could disagree on which value counts).
///
/// A document notes where each value lies (one token a value, in one array) and makes a `String` only of what is
/// read: an adapter that reads a few members of a large upstream answer (``Value/subscript(member:)``) makes
/// nothing of the rest. ``parse(_:refusesDuplicateKeys:)`` builds the whole ``JSONValue`` from the tokens, each
/// array and object at its final size.
public final class JSONDocument: Sendable {
    /// Nesting deeper than this is refused, so a hostile body cannot exhaust the stack.
    public static let maxDepth = 256

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
        /// A string whose bytes are all ASCII.
        var isASCII = true
        /// An object that may name a key twice (or has too many members, or keys that are escaped or not ASCII,
        /// to tell cheaply): a lookup reads all its members for the last one, and building its ``JSONObject``
        /// compares its keys as `String`s. Otherwise both stop at the first.
        var mayRepeatKeys = false
        /// A boolean's 0 or 1, an integer's bit pattern, a number's bits, a container's count of members, an
        /// unescaped key's ``JSONDocument/fingerprint(_:)``.
        var payload: UInt64 = 0
    }

    /// Reads `bytes`; `nil` when they are not exactly one strict JSON value (surrounding whitespace allowed), or
    /// 4 GiB or more (far past any body the fetch stage accepts).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count < Int(UInt32.max),
            let tokens = bytes.withUnsafeBufferPointer({ Builder.tokens(of: $0) })
        else { return nil }
        self.bytes = bytes
        self.tokens = tokens
    }

    /// The document in `bytes` as a value; `nil` when they are not exactly one strict JSON value (surrounding
    /// whitespace allowed), or 4 GiB or more.
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
        guard buffer.count < Int(UInt32.max), let tokens = Builder.tokens(of: buffer) else { return nil }
        return tokens.withUnsafeBufferPointer {
            TreeBuilder(bytes: buffer, tokens: $0, refusesDuplicateKeys: refusesDuplicateKeys).value(at: 0)
        }
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
            return Elements(
                document: self.document,
                first: self.index + 1,
                end: Int(token.next),
                count: Int(token.payload)
            )
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
                members.append(
                    (self.document.string(at: keyIndex), Value(document: self.document, index: keyIndex + 1))
                )
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
        public func withUnescapedBytes<Result>(
            _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
        ) rethrows -> Result? {
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

        /// The value as ``JSONDocument/parse(_:refusesDuplicateKeys:)`` reads it (a key named twice keeps its
        /// last value).
        public var jsonValue: JSONValue {
            self.document.tokens.withUnsafeBufferPointer { tokens in
                self.document.bytes.withUnsafeBufferPointer { bytes in
                    // Refuses nothing: only a key named twice can be refused, and this reading keeps the last.
                    let builder = TreeBuilder(bytes: bytes, tokens: tokens, refusesDuplicateKeys: false)
                    return builder.value(at: self.index) ?? .null
                }
            }
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
        return self.bytes.withUnsafeBufferPointer { Self.text(of: token, in: $0) }
    }

    /// The text of a string token.
    fileprivate static func text(of token: Token, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        // Checked when the document was read: valid UTF-8, and escapes that decode.
        if !token.isEscaped {
            let contents = UnsafeBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.end)])
            return String(decoding: contents, as: UTF8.self)
        }
        return Self.decodeEscapes(bytes, from: Int(token.start), to: Int(token.end))
    }

    /// The text of an escaped string's contents (checked when the document was read), decoded straight into the
    /// string's storage: an escape is never shorter than what it stands for (`\n` one byte for two, `\u00E9` two
    /// for six, a surrogate pair four for twelve). A review's text with line breaks is one such string.
    private static func decodeEscapes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> String {
        var reader = Scanner(bytes)
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
            // Not reachable: the document checked every escape when it was read.
            assertionFailure("a string of a JSONDocument does not decode")
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        return text
    }

    /// Builds the ``JSONValue`` of the value at a token, and of everything in it.
    private struct TreeBuilder {
        let bytes: UnsafeBufferPointer<UInt8>
        let tokens: UnsafeBufferPointer<Token>
        let refusesDuplicateKeys: Bool

        /// The value at `index`; `nil` when an object in it names a key twice and that refuses the document.
        func value(at index: Int) -> JSONValue? {
            let token = self.tokens[index]
            switch token.kind {
            case .null: return .null
            case .bool: return .bool(token.payload != 0)
            case .integer: return .integer(Int64(bitPattern: token.payload))
            case .number: return .number(Double(bitPattern: token.payload))
            case .string: return .string(JSONDocument.text(of: token, in: self.bytes))
            case .array:
                var elements: [JSONValue] = []
                elements.reserveCapacity(Int(token.payload))
                var element = index + 1
                while element < token.next {
                    guard let value = self.value(at: element) else { return nil }
                    elements.append(value)
                    element = Int(self.tokens[element].next)
                }
                return .array(elements)
            case .object:
                return self.object(at: index, token).map(JSONValue.object)
            }
        }

        private func object(at index: Int, _ token: Token) -> JSONObject? {
            var members: [JSONObject.Element] = []
            members.reserveCapacity(Int(token.payload))
            // Keys the reading told apart are appended as they come. Others are checked one by one while the
            // object is small, through a dictionary of their places past `JSONObject.indexThreshold` members (so a
            // hostile object of many keys, repeated or not, costs no more than linear time).
            var places: [String: Int]?
            var keyIndex = index + 1
            while keyIndex < token.next {
                let key = JSONDocument.text(of: self.tokens[keyIndex], in: self.bytes)
                guard let value = self.value(at: keyIndex + 1) else { return nil }
                keyIndex = Int(self.tokens[keyIndex + 1].next)
                guard token.mayRepeatKeys else {
                    members.append((key: key, value: value))
                    continue
                }
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
            }
            return JSONObject(uniqueMembers: members, positions: places)
        }
    }

    /// The grammar's pieces below the level of containers: whitespace, literals, numbers and `\u` escapes.
    struct Scanner {
        /// The document's bytes, borrowed while a document is read or a string decoded.
        ///
        /// - Important: Sound because a scanner never outlives the `withUnsafeBufferPointer` /
        ///   `withContiguousStorageIfAvailable` call whose buffer it reads, and every read goes through an index
        ///   checked against `bytes.count` first.
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// How a number reads.
        enum Number {
            case integer(Int64)
            case number(Double)
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

        /// Reads `word` (`true`, `false`, `null`) at `index`; `false` when it is not there.
        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard self.index + count <= self.bytes.count else { return false }
            for offset in 0..<count where self.bytes[self.index + offset] != word.utf8Start[offset] { return false }
            self.index += count
            return true
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

        /// A number at `index`: an integer that fits `Int64` (`Int64.min` included) as one, anything else as a
        /// finite `Double`; `nil` when it is not a JSON number or is infinite.
        mutating func number() -> Number? {
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

    /// Reads a document's tokens: the grammar's containers and strings, over ``Scanner``.
    private struct Builder {
        var reader: Scanner
        var tokens: [Token] = []
        /// The key tokens of the objects being read, innermost last (one array for all, not one an object).
        var keys: [Int] = []

        static func tokens(of bytes: UnsafeBufferPointer<UInt8>) -> [Token]? {
            var builder = Builder(reader: Scanner(bytes))
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
            guard depth < JSONDocument.maxDepth else { return false }
            self.reader.skipWhitespace()
            guard let byte = self.reader.current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return self.object(depth: depth)
            case UInt8(ascii: "["): return self.array(depth: depth)
            case UInt8(ascii: "\""): return self.string()
            case UInt8(ascii: "t"):
                guard self.reader.literal("true") else { return false }
                self.append(.bool, payload: 1)
            case UInt8(ascii: "f"):
                guard self.reader.literal("false") else { return false }
                self.append(.bool, payload: 0)
            case UInt8(ascii: "n"):
                guard self.reader.literal("null") else { return false }
                self.append(.null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                switch self.reader.number() {
                case .integer(let value)?: self.append(.integer, payload: UInt64(bitPattern: value))
                case .number(let value)?: self.append(.number, payload: value.bitPattern)
                case nil: return false
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
        /// where two are alike. An escaped key, a key that is not ASCII (`String`s compare canonically, and two
        /// different byte sequences can be one key), or more than 32 keys, count as may.
        private func mayRepeat(_ keys: ArraySlice<Int>) -> Bool {
            guard keys.count <= 32 else { return true }
            for (offset, key) in keys.enumerated() {
                let token = self.tokens[key]
                if token.isEscaped || !token.isASCII { return true }
                for other in keys.prefix(offset) where self.tokens[other].payload == token.payload {
                    let otherToken = self.tokens[other]
                    let bytes = self.reader.bytes
                    if bytes[Int(token.start)..<Int(token.end)].elementsEqual(
                        bytes[Int(otherToken.start)..<Int(otherToken.end)]
                    ) {
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

        /// A string (at its opening quote), checked but not made: no control characters, valid UTF-8, escapes that
        /// decode.
        private mutating func string() -> Bool {
            let bytes = self.reader.bytes
            var index = self.reader.index + 1
            let start = index
            var isEscaped = false
            var isASCII = true
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
                            start: UInt32(start),
                            end: UInt32(index),
                            next: UInt32(self.tokens.count + 1),
                            kind: .string,
                            isEscaped: isEscaped,
                            isASCII: isASCII
                        )
                    )
                    self.reader.index = index + 1
                    return true
                case UInt8(ascii: "\\"):
                    // Checked here, decoded only when read. An escape decodes to whole UTF-8 sequences, so the
                    // bytes around it are valid exactly when they are valid on their own.
                    guard index + 1 < bytes.count else { return false }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
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
                    isASCII = false
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
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        let second = bytes[index + 1]
        guard second >= low, second <= high else { return nil }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}
