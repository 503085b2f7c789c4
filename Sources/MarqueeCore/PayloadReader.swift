public import MarqueeJSON

/// Reads the fields of one JSON object strictly: each accessor checks type and range, and ``finish()`` refuses
/// any field nobody asked for. Errors carry the field's dotted path.

public struct PayloadReader {
    private let object: JSONObject
    private let path: String
    /// Which members were read: bit `i` for `object.members[i]`, for objects of up to 64 members (payloads have a
    /// handful; no array to grow and search per reader, make bench-fetch).
    private var readMembers: UInt64 = 0
    /// The keys asked for, for an object of more members.
    private var consumed: [String] = []

    /// - Throws: A ``PayloadError`` when `value` is not an object.
    public init(_ value: JSONValue, path: String = "") throws(PayloadError) {
        guard case .object(let object) = value else {
            throw PayloadError(
                .invalidField,
                field: path.isEmpty ? nil : path,
                "expected an object, got \(value.typeName)"
            )
        }
        self.object = object
        self.path = path
    }

    /// Whether `scalar` is a control character (general category Cc: U+0000–001F, U+007F–009F).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private func fieldPath(_ key: String) -> String { self.path.isEmpty ? key : "\(self.path).\(key)" }

    private mutating func value(_ key: String) -> JSONValue? {
        guard let index = self.markRead(key) else { return nil }
        let value = self.object.members[index].value
        return value == .null ? nil : value
    }

    /// Marks `key` as read; returns its member's place, if the object has it.
    private mutating func markRead(_ key: String) -> Int? {
        let index = self.object.index(of: key)
        if self.object.count <= UInt64.bitWidth {
            if let index { self.readMembers |= 1 << UInt64(index) }
        } else if !self.consumed.contains(key) {
            self.consumed.append(key)
        }
        return index
    }

    private func invalid(_ key: String, _ reason: String) -> PayloadError {
        PayloadError(.invalidField, field: self.fieldPath(key), reason)
    }

    private func missing(_ key: String) -> PayloadError {
        PayloadError(.missingField, field: self.fieldPath(key), "required")
    }

    /// An optional string; with `pattern` it must match (whole string), with `maxLength` it is bounded.
    public mutating func optionalString(
        _ key: String,
        maxLength: Int = 1000,
        allowEmpty: Bool = false,
        check: ((String) -> Bool)? = nil,
        expected: String? = nil
    ) throws(PayloadError) -> String? {
        guard let value = self.value(key) else { return nil }
        guard case .string(let string) = value else {
            throw self.invalid(key, "expected \(expected ?? "a string"), got \(value.typeName)")
        }
        try Self.check(
            string,
            field: self.fieldPath(key),
            maxLength: maxLength,
            allowEmpty: allowEmpty,
            check: check,
            expected: expected
        )
        return string
    }

    /// The checks ``optionalString(_:maxLength:allowEmpty:check:expected:)`` makes of a string it read, for
    /// values checked without a payload around them (``ImageJob/checked()``), with the same errors.
    ///
    /// - Parameter field: The field's dotted path, as errors name it.
    static func check(
        _ string: String,
        field: String,
        maxLength: Int = 1000,
        allowEmpty: Bool = false,
        check: ((String) -> Bool)? = nil,
        expected: String? = nil
    ) throws(PayloadError) {
        // These checks run on every string of every payload a stage reads or a worker emits: each stops at the
        // first character that decides it, and none looks up Unicode properties for ASCII (make bench-fetch).
        // A field with an expected form names it in every refusal, so the sender learns what to send (built only
        // for a refusal).
        func form() -> String { expected.map { " (expected \($0))" } ?? "" }
        if !allowEmpty && string.allSatisfy(\.isWhitespace) {
            throw PayloadError(.invalidField, field: field, "must not be empty\(form())")
        }
        // A string has at most as many characters as UTF-8 bytes: count characters only when that may exceed.
        if string.utf8.count > maxLength && string.count > maxLength {
            throw PayloadError(.invalidField, field: field, "longer than \(maxLength) characters\(form())")
        }
        if string.unicodeScalars.contains(where: Self.isControl) {
            throw PayloadError(.invalidField, field: field, "contains control characters\(form())")
        }
        if let check, !check(string) {
            let reason = "expected \(expected ?? "a valid value"), got '\(string.prefix(80))'"
            throw PayloadError(.invalidField, field: field, reason)
        }
    }

    public mutating func string(
        _ key: String,
        maxLength: Int = 1000,
        check: ((String) -> Bool)? = nil,
        expected: String? = nil
    ) throws(PayloadError) -> String {
        guard let string = try self.optionalString(key, maxLength: maxLength, check: check, expected: expected) else {
            throw self.missing(key)
        }
        return string
    }

    /// An optional integer within `range`.
    public mutating func optionalInt(_ key: String, in range: ClosedRange<Int64>) throws(PayloadError) -> Int64? {
        guard let value = self.value(key) else { return nil }
        let number: Int64
        switch value {
        case .integer(let integer): number = integer
        case .number(let double) where double.rounded() == double && abs(double) < 9e15: number = Int64(double)
        default:
            throw self.invalid(
                key,
                "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(value.typeName)"
            )
        }
        try Self.check(number, field: self.fieldPath(key), in: range)
        return number
    }

    /// The range check ``optionalInt(_:in:)`` makes of an integer it read, for values checked without a payload
    /// around them (``FetchJob/checked()``), with the same error.
    static func check(_ number: Int64, field: String, in range: ClosedRange<Int64>) throws(PayloadError) {
        guard range.contains(number) else {
            let reason = "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(number)"
            throw PayloadError(.invalidField, field: field, reason)
        }
    }

    public mutating func int(_ key: String, in range: ClosedRange<Int64>) throws(PayloadError) -> Int64 {
        guard let number = try self.optionalInt(key, in: range) else { throw self.missing(key) }
        return number
    }

    public mutating func optionalBool(_ key: String) throws(PayloadError) -> Bool? {
        guard let value = self.value(key) else { return nil }
        guard case .bool(let bool) = value else {
            throw self.invalid(key, "expected true or false, got \(value.typeName)")
        }
        return bool
    }

    /// A nested object, read with its own reader.
    public mutating func optionalObject(_ key: String) throws(PayloadError) -> PayloadReader? {
        guard let value = self.value(key) else { return nil }
        return try PayloadReader(value, path: self.fieldPath(key))
    }

    /// A field kept as raw JSON (record data whose schema belongs to a later stage).
    public mutating func rawObject(_ key: String) throws(PayloadError) -> JSONObject {
        guard let value = self.value(key) else { throw self.missing(key) }
        guard case .object(let object) = value else {
            throw self.invalid(key, "expected an object, got \(value.typeName)")
        }
        return object
    }

    /// A field kept as a raw JSON array, for the caller to check element by element.
    public mutating func rawArray(_ key: String) throws(PayloadError) -> [JSONValue] {
        guard let value = self.value(key) else { throw self.missing(key) }
        guard case .array(let array) = value else {
            throw self.invalid(key, "expected an array, got \(value.typeName)")
        }
        return array
    }

    /// An optional field kept as a raw JSON array, for the caller to check element by element.
    public mutating func optionalRawArray(_ key: String) throws(PayloadError) -> [JSONValue]? {
        guard let value = self.value(key) else { return nil }
        guard case .array(let array) = value else {
            throw self.invalid(key, "expected an array, got \(value.typeName)")
        }
        return array
    }

    /// Marks fields as read without reading them.
    public mutating func ignore(_ keys: String...) {
        for key in keys { _ = self.markRead(key) }
    }

    /// - Throws: A ``PayloadError`` naming the first field nobody read.
    public func finish() throws(PayloadError) {
        let unread: [String]
        if self.object.count <= UInt64.bitWidth {
            let all: UInt64 = self.object.count == UInt64.bitWidth ? .max : (1 << UInt64(self.object.count)) - 1
            guard self.readMembers != all else { return }
            unread = self.object.members.indices.filter { self.readMembers & (1 << UInt64($0)) == 0 }.map {
                self.object.members[$0].key
            }
        } else {
            guard !self.object.keys.allSatisfy(self.consumed.contains) else { return }
            unread = self.object.keys.filter { !self.consumed.contains($0) }
        }
        // The first in key order, so the error does not depend on the members' order.
        if let unknown = unread.min() {
            throw PayloadError(.unknownField, field: self.fieldPath(unknown), "unknown field")
        }
    }
}
