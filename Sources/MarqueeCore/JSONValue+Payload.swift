public import MarqueeJSON

// MARK: - JSONValue + Payload

extension JSONValue {
    /// Parses a payload: UTF-8 JSON read strictly (``JSONDocument``: RFC 8259, no trailing commas, no comments,
    /// nesting at most ``JSONDocument/maxDepth``), refusing an object that names a key twice.
    ///
    /// - Throws: A ``PayloadError`` with code ``PayloadError/Code-swift.struct/notJSON`` for bytes that are not
    ///   UTF-8 JSON.
    public static func parse(_ bytes: some Collection<UInt8>) throws(PayloadError) -> JSONValue {
        // A document the strict reader accepts is UTF-8 (its strings are validated, everything else must be
        // ASCII), so the whole payload is checked for UTF-8 only when it was refused, to say why.
        guard let value = JSONDocument.parse(bytes, refusesDuplicateKeys: true) else {
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw PayloadError(.notJSON, field: nil, "the payload is not UTF-8")
            }
            // Only on the way out: say which of the two it was.
            if JSONDocument.parse(bytes) != nil {
                throw PayloadError(.notJSON, field: nil, "the payload names a key twice in one object")
            }
            throw PayloadError(.notJSON, field: nil, "the payload is not JSON")
        }
        return value
    }
}
