public import MarqueeCore

/// A gzip stream that cannot be read or written: corrupt or cut-off input, or zlib out of memory.
///
/// None is retriable: the same bytes fail the same way (a new download is new input).
public struct GzipError: RetriableError, Sendable, Hashable {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String
        /// The bytes are not gzip (or zlib), or a block or check sum is wrong.
        public static let corrupt = Code(name: "corrupt")
        /// The input ended inside a stream: a cut download or file.
        public static let truncated = Code(name: "truncated")
        /// zlib could not allocate its state.
        public static let outOfMemory = Code(name: "outOfMemory")

        public var description: String { self.name }
    }

    public var code: Code
    /// What is wrong, in words for the operator.
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether the same input can succeed later: never.
    public var isRetriable: Bool { false }

    /// The reason.
    public var description: String { self.reason }
}
