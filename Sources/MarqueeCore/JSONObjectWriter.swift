/// Writes a JSON object's bytes directly, member by member, exactly as ``JSONValue/encoded()`` writes the
/// equivalent ``JSONObject``: compact, keys sorted, the same escapes and number forms.
///
/// A record built as a ``JSONObject`` and then written costs a member array, a copy of every value, a sort and
/// a second pass over every string; a parser that knows its record's keys writes them once instead
/// (``Record/init(kind:key:fetchedAt:writtenData:)``; BENCHMARKS.md, "Eighth round").
///
/// Keys are static and must be written in ascending order, each once: builds with assertions check both, so a
/// test that writes the object catches a misplaced key. A `nil` value is written as `null`; to leave a key out,
/// do not write it.
public struct JSONObjectWriter: Sendable {
    /// The bytes written so far: `{` and the members.
    private var bytes: [UInt8]
    private var isEmpty = true
    #if DEBUG
        private var lastKey: [UInt8] = []
    #endif

    /// - Parameter capacity: The bytes to reserve (a guess of the object's size).
    public init(capacity: Int = 256) {
        self.bytes = []
        self.bytes.reserveCapacity(capacity)
        self.bytes.append(UInt8(ascii: "{"))
    }

    /// Writes `"key":`, after a comma unless it is the first member.
    private mutating func key(_ key: StaticString) {
        precondition(key.hasPointerRepresentation, "JSONObjectWriter keys are string literals")
        let keyBytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        #if DEBUG
            assert(keyBytes.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
                "JSONObjectWriter key '\(key)' needs escaping")
            assert(self.isEmpty || self.lastKey.lexicographicallyPrecedes(keyBytes),
                "JSONObjectWriter key '\(key)' written after '\(String(decoding: self.lastKey, as: UTF8.self))': keys go in ascending order, each once")
            self.lastKey = Array(keyBytes)
        #endif
        if !self.isEmpty { self.bytes.append(UInt8(ascii: ",")) }
        self.isEmpty = false
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(contentsOf: keyBytes)
        self.bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    private mutating func null() { self.bytes.append(contentsOf: "null".utf8) }

    public mutating func write(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { JSONValue.write(string: value, to: &self.bytes) } else { self.null() }
    }

    /// A string given as the bytes of a JSON string that needs no escape (valid UTF-8 without a quote, a
    /// backslash or a control character, as ``JSONDocument/Value/withUnescapedBytes(_:)`` hands them out):
    /// written as they are, as ``write(_:_:)-(_,String?)`` would write their text.
    public mutating func write(_ key: StaticString, unescapedString bytes: UnsafeBufferPointer<UInt8>) {
        assert(
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") },
            "JSONObjectWriter.write(_:unescapedString:) was given bytes that need escaping"
        )
        self.key(key)
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(contentsOf: bytes)
        self.bytes.append(UInt8(ascii: "\""))
    }

    public mutating func write(_ key: StaticString, _ value: Int64?) {
        self.key(key)
        if let value { JSONValue.integer(value).write(to: &self.bytes) } else { self.null() }
    }

    public mutating func write(_ key: StaticString, _ value: Double?) {
        self.key(key)
        if let value { JSONValue.number(value).write(to: &self.bytes) } else { self.null() }
    }

    public mutating func write(_ key: StaticString, _ value: Bool?) {
        self.key(key)
        if let value { JSONValue.bool(value).write(to: &self.bytes) } else { self.null() }
    }

    /// An array of strings.
    public mutating func write(_ key: StaticString, _ values: [String]) {
        self.key(key)
        self.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { self.bytes.append(UInt8(ascii: ",")) }
            JSONValue.write(string: value, to: &self.bytes)
        }
        self.bytes.append(UInt8(ascii: "]"))
    }

    /// An array of integers.
    public mutating func write(_ key: StaticString, _ values: [Int64]) {
        self.key(key)
        self.bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { self.bytes.append(UInt8(ascii: ",")) }
            JSONValue.integer(value).write(to: &self.bytes)
        }
        self.bytes.append(UInt8(ascii: "]"))
    }

    /// The bytes written so far, without the closing brace (a record keeps them as they are and closes the
    /// object when it writes its payload: closing here could copy them, as the caller's writer still holds them).
    var unclosedBytes: [UInt8] { self.bytes }

    /// The object's bytes: the members written, closed.
    public consuming func finish() -> [UInt8] {
        self.bytes.append(UInt8(ascii: "}"))
        return self.bytes
    }
}
