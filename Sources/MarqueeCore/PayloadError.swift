/// Why a payload was refused: which field, and what was wrong with it.
///
/// Payloads come from operators' scripts and from other stages; the message says what to fix, e.g.
/// `field 'page': expected an integer from 1 to 500, got -3`.
public struct PayloadError: RetriableError, Hashable, Sendable {
    /// The kind of a ``PayloadError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String
        /// The bytes are not UTF-8 JSON.
        public static let notJSON = Code(name: "notJSON")
        /// A required field is missing.
        public static let missingField = Code(name: "missingField")
        /// A field has the wrong type or an invalid value.
        public static let invalidField = Code(name: "invalidField")
        /// The payload has a field this version does not define.
        public static let unknownField = Code(name: "unknownField")
        /// The `kind` is not one this stage knows.
        public static let unknownKind = Code(name: "unknownKind")
        /// The `v` is not a version this build reads.
        public static let unsupportedVersion = Code(name: "unsupportedVersion")

        public var description: String { self.name }
    }

    public var code: Code
    /// The dotted path of the offending field (`follow.pages`), or `nil` for the whole payload.
    public var field: String?
    /// What is wrong, for the operator.
    public var reason: String

    public init(_ code: Code, field: String?, _ reason: String) {
        self.code = code
        self.field = field
        self.reason = reason
    }

    /// Whether the same payload may be accepted later: never, the same bytes are refused the same way.
    public var isRetriable: Bool { false }

    public var description: String {
        if let field { return "field '\(field)': \(self.reason)" }
        return self.reason
    }
}
