/// Writes compact JSON bytes: every payload, record, log line and emulator body Marquee writes goes through it.
///
/// The output is compact (no whitespace), strings are UTF-8 with quotes, backslashes and control characters
/// escaped (`\n`, `\r`, `\t`, other controls as `\u00XX`; slashes and non-ASCII as they are), integers in decimal,
/// other numbers in Swift's shortest round-trip form (`null` for a NaN or an infinity, which JSON cannot hold).
///
/// Values are written one after the other and the commas come by themselves: an object is ``beginObject()``,
/// then a ``key(_:)-(StaticString)`` before each member's value, then ``endObject()``; an array is
/// ``beginArray()``, the elements, ``endArray()``. The `write(_:_:)` methods write a whole member at once, `nil`
/// as `null` (to leave a member out, do not write it).
///
/// Payloads and records have their keys sorted (``KeyOrder/sorted``), so that one value always has one form. A
/// ``JSONValue`` is written with its objects' keys sorted, or in its objects' own order with ``KeyOrder/asGiven``
/// (bodies that must keep an upstream's key order, log lines that put their timestamp first). Code that writes an
/// object member by member writes its keys in the order they go out: in a sorted writer, keys given as literals
/// must come in ascending order, each once, and builds with assertions check this, so a test that writes the
/// object catches a misplaced key.
///
/// Writing member by member, with the keys known where the code is written, costs a fraction of building a
/// ``JSONObject`` and writing it (no member array, no copy of every value, no sort): the fetch stage writes its
/// records and jobs this way.
public struct JSONWriter: Sendable {
    /// The order of a ``JSONObject``'s members on the way out.
    public enum KeyOrder: Sendable {
        /// Keys ascending (``JSONObject/sortedMembers``); literal keys written one by one are checked to ascend.
        case sorted
        /// Keys in the order the object holds them, or the order they are written in.
        case asGiven
    }

    /// How objects' keys are ordered.
    public let keyOrder: KeyOrder
    /// Whether DEL (0x7F) is escaped too (`\u007f`), for text read on a terminal (log lines).
    public let escapesDelete: Bool
    /// The bytes written so far.
    public var bytes: [UInt8] { self.output }
    /// How many objects and arrays are open.
    public var depth: Int { self.openContainers }

    // The state is internal and usable from inlinable code: the writer's methods are inlined into the modules
    // that call them (a record writes some thirty members, each a call across modules otherwise).
    @usableFromInline var output: [UInt8]
    @usableFromInline var openContainers = 0
    /// Whether the next key or element needs a comma before it.
    @usableFromInline var needsComma = false
    #if DEBUG
    /// The last literal key written in each open object (sorted writers only), innermost last.
    @usableFromInline var lastKeys: [[UInt8]?] = []
    #endif

    /// - Parameters:
    ///   - capacity: The bytes to reserve (a guess of the output's size).
    ///   - keyOrder: How objects' keys are ordered. Default: ``KeyOrder/sorted``.
    ///   - escapesDelete: Whether DEL is escaped too. Default: `false`.
    @inlinable
    public init(capacity: Int = 256, keyOrder: KeyOrder = .sorted, escapesDelete: Bool = false) {
        self.keyOrder = keyOrder
        self.escapesDelete = escapesDelete
        self.output = []
        self.output.reserveCapacity(capacity)
    }

    /// A sorted writer with an object begun: its members are written next.
    @inlinable
    public static func object(capacity: Int = 256) -> JSONWriter {
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        return writer
    }

    /// The output: everything written, every object and array closed.
    @inlinable
    public consuming func finish() -> [UInt8] {
        precondition(
            self.openContainers == 0,
            "JSONWriter.finish() with \(self.openContainers) objects or arrays still open"
        )
        return self.output
    }

    /// Forgets everything written, keeping the room reserved (a caller writing many values one at a time).
    @inlinable
    public mutating func removeAll() {
        self.output.removeAll(keepingCapacity: true)
        self.openContainers = 0
        self.needsComma = false
        #if DEBUG
        self.lastKeys.removeAll()
        #endif
    }

    // MARK: - Structure

    /// A comma, when a value or key came before in the same object or array.
    @inlinable @inline(__always)
    mutating func separate() {
        if self.needsComma { self.output.append(UInt8(ascii: ",")) }
    }

    @inlinable
    public mutating func beginObject() {
        self.separate()
        self.output.append(UInt8(ascii: "{"))
        self.openContainers += 1
        self.needsComma = false
        #if DEBUG
        self.lastKeys.append(nil)
        #endif
    }

    @inlinable
    public mutating func endObject() {
        self.output.append(UInt8(ascii: "}"))
        self.openContainers -= 1
        self.needsComma = true
        #if DEBUG
        _ = self.lastKeys.popLast()
        #endif
    }

    @inlinable
    public mutating func beginArray() {
        self.separate()
        self.output.append(UInt8(ascii: "["))
        self.openContainers += 1
        self.needsComma = false
    }

    @inlinable
    public mutating func endArray() {
        self.output.append(UInt8(ascii: "]"))
        self.openContainers -= 1
        self.needsComma = true
    }

    /// Writes `"key":`: the member's value is written next.
    @inlinable
    public mutating func key(_ key: StaticString) {
        precondition(key.hasPointerRepresentation, "JSONWriter keys given as StaticString are string literals")
        let keyBytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        #if DEBUG
        assert(
            keyBytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
            "JSONWriter key '\(key)' needs escaping"
        )
        #endif
        self.checkOrder(of: keyBytes)
        self.separate()
        self.output.append(UInt8(ascii: "\""))
        self.output.append(contentsOf: keyBytes)
        self.output.append(UInt8(ascii: "\""))
        self.output.append(UInt8(ascii: ":"))
        self.needsComma = false
    }

    /// Writes `"key":` for a key known only at run time (escaped as any string), in the order the caller
    /// chose: the member's value is written next.
    @inlinable
    public mutating func key(_ key: String) {
        self.separate()
        self.appendString(key)
        self.output.append(UInt8(ascii: ":"))
        self.needsComma = false
    }

    /// In a sorted writer with assertions: the literal key comes after the one before it in its object.
    @inlinable @inline(__always)
    mutating func checkOrder(of key: UnsafeBufferPointer<UInt8>) {
        #if DEBUG
        guard self.keyOrder == .sorted, let open = self.lastKeys.indices.last else { return }
        if let last = self.lastKeys[open] {
            assert(
                last.lexicographicallyPrecedes(key),
                "JSONWriter key '\(String(decoding: key, as: UTF8.self))' written after "
                    + "'\(String(decoding: last, as: UTF8.self))': keys go in ascending order, each once"
            )
        }
        self.lastKeys[open] = Array(key)
        #endif
    }

    // MARK: - Values

    @inlinable
    public mutating func writeNull() {
        self.separate()
        self.output.append(contentsOf: "null".utf8)
        self.needsComma = true
    }

    @inlinable
    public mutating func write(bool value: Bool) {
        self.separate()
        self.output.append(contentsOf: (value ? "true" : "false").utf8)
        self.needsComma = true
    }

    @inlinable
    public mutating func write(integer value: Int64) {
        self.separate()
        self.output.append(contentsOf: String(value).utf8)
        self.needsComma = true
    }

    /// A number; `null` for a NaN or an infinity (a ``JSONValue`` never holds one, as JSON has none).
    @inlinable
    public mutating func write(number value: Double) {
        self.separate()
        self.output.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
        self.needsComma = true
    }

    @inlinable
    public mutating func write(string value: String) {
        self.separate()
        self.appendString(value)
        self.needsComma = true
    }

    /// A string given as the bytes of a JSON string that needs no escape (valid UTF-8 without a quote, a
    /// backslash or a control character, as ``JSONDocument/Value/withUnescapedBytes(_:)`` hands them out):
    /// written as they are, as ``write(string:)`` would write their text.
    @inlinable
    public mutating func write(unescapedString bytes: UnsafeBufferPointer<UInt8>) {
        assert(
            !bytes.contains { self.needsEscape($0) },
            "JSONWriter.write(unescapedString:) was given bytes that need escaping"
        )
        self.separate()
        self.output.append(UInt8(ascii: "\""))
        self.output.append(contentsOf: bytes)
        self.output.append(UInt8(ascii: "\""))
        self.needsComma = true
    }

    /// The object another writer began with ``object(capacity:)`` and left open, as the next value: its bytes as
    /// they are, then its closing brace (a record keeps a parser's writer that way until it is written itself).
    @inlinable
    public mutating func write(openObject other: JSONWriter) {
        precondition(
            other.openContainers == 1 && other.output.first == UInt8(ascii: "{"),
            "JSONWriter.write(openObject:) takes a writer with one object open"
        )
        self.separate()
        self.output.append(contentsOf: other.output)
        self.output.append(UInt8(ascii: "}"))
        self.needsComma = true
    }

    /// A whole value, its objects' keys in the writer's ``keyOrder``.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: self.writeNull()
        case .bool(let value): self.write(bool: value)
        case .integer(let value): self.write(integer: value)
        case .number(let value): self.write(number: value)
        case .string(let value): self.write(string: value)
        case .array(let values):
            self.beginArray()
            for value in values { self.write(value) }
            self.endArray()
        case .object(let object): self.write(object: object)
        }
    }

    /// A whole object, its keys in the writer's ``keyOrder``.
    public mutating func write(object: JSONObject) {
        self.beginObject()
        for member in self.keyOrder == .sorted ? object.sortedMembers : object.members {
            self.key(member.key)
            self.write(member.value)
        }
        self.endObject()
    }

    // MARK: - Members

    @inlinable
    public mutating func write(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { self.write(string: value) } else { self.writeNull() }
    }

    /// The member `key` with a string's bytes that need no escape (``write(unescapedString:)``).
    @inlinable
    public mutating func write(_ key: StaticString, unescapedString bytes: UnsafeBufferPointer<UInt8>) {
        self.key(key)
        self.write(unescapedString: bytes)
    }

    @inlinable
    public mutating func write(_ key: StaticString, _ value: Int64?) {
        self.key(key)
        if let value { self.write(integer: value) } else { self.writeNull() }
    }

    @inlinable
    public mutating func write(_ key: StaticString, _ value: Double?) {
        self.key(key)
        if let value { self.write(number: value) } else { self.writeNull() }
    }

    @inlinable
    public mutating func write(_ key: StaticString, _ value: Bool?) {
        self.key(key)
        if let value { self.write(bool: value) } else { self.writeNull() }
    }

    /// The member `key`: an array of strings.
    public mutating func write(_ key: StaticString, _ values: [String]) {
        self.key(key)
        self.beginArray()
        for value in values { self.write(string: value) }
        self.endArray()
    }

    /// The member `key`: an array of integers.
    public mutating func write(_ key: StaticString, _ values: [Int64]) {
        self.key(key)
        self.beginArray()
        for value in values { self.write(integer: value) }
        self.endArray()
    }

    /// The member `key`: a whole value (``write(_:)-(JSONValue)``).
    public mutating func write(_ key: StaticString, _ value: JSONValue) {
        self.key(key)
        self.write(value)
    }

    // MARK: - Strings

    /// Whether a byte of a string must be escaped.
    @inlinable @inline(__always)
    static func needsEscape(_ byte: UInt8, escapesDelete: Bool) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (escapesDelete && byte == 0x7F)
    }

    @inlinable
    func needsEscape(_ byte: UInt8) -> Bool { Self.needsEscape(byte, escapesDelete: self.escapesDelete) }

    /// Appends a quoted, escaped string.
    @inlinable
    mutating func appendString(_ string: String) {
        Self.appendString(string, escapesDelete: self.escapesDelete, to: &self.output)
    }

    /// Appends a quoted, escaped string to `bytes` (a function of its own, not a method: the loop then works on
    /// the array alone, not on the whole writer).
    @inlinable
    static func appendString(_ string: String, escapesDelete: Bool, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Over the contiguous UTF-8 bytes: runs that need no escape are appended whole.
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count where Self.needsEscape(utf8[index], escapesDelete: escapesDelete) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                Self.appendEscape(utf8[index], to: &bytes)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    @usableFromInline static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    @usableFromInline
    static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [backslash, UInt8(ascii: "\"")])
        case backslash: bytes.append(contentsOf: [backslash, backslash])
        case 0x0A: bytes.append(contentsOf: [backslash, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [backslash, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [backslash, UInt8(ascii: "t")])
        default:
            bytes.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }
}
