public import MarqueeCore

/// Why a source adapter could not build a request or make sense of a response.
///
/// The fetch stage sorts failures by ``isRetriable``: rate limits, exhausted quotas, 5xx answers and malformed
/// (e.g. truncated) bodies are transient and go to a retry tier, honouring ``retryAfter`` when the upstream gave
/// one; everything else is permanent and goes to the dead-letter topic.
///
/// - Important: A ``SourceError``'s ``description`` and ``reason`` never contain an API key: upstream messages
///   are shortened and scrubbed of the configured keys before they are put into an error.
public struct SourceError: RetriableError, Sendable {
    /// The kind of a ``SourceError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case missingKey
            case unauthorized
            case sessionRefused
            case rateLimited
            case quotaExhausted
            case unavailable
            case notFound
            case badRequest
            case malformed
            case invalidConfiguration
        }

        fileprivate let base: Base
        /// The source a ``missingKey(_:)`` or ``unauthorized(_:)`` code names; `nil` for the other codes.
        public let source: Source?

        fileprivate init(_ base: Base, source: Source? = nil) {
            self.base = base
            self.source = source
        }

        /// The source needs a key and none is configured.
        public static func missingKey(_ source: Source) -> Code { Code(.missingKey, source: source) }
        /// The source refused the key: HTTP 401/403, TMDB `status_code` 7 or 10, KOFIC's invalid-key fault,
        /// Kakao's 401.
        public static func unauthorized(_ source: Source) -> Code { Code(.unauthorized, source: source) }
        /// A signed-in user's session was refused (TMDB `status_code` 3 or 17 on an account request): the account's
        /// jobs pause, the source's other jobs go on.
        public static let sessionRefused = Code(.sessionRefused)
        /// HTTP 429; ``SourceError/retryAfter`` holds the `Retry-After` delay when one was sent.
        public static let rateLimited = Code(.rateLimited)
        /// KOFIC's daily call quota is spent; ``SourceError/retryAfter`` reaches the next midnight in Korea.
        public static let quotaExhausted = Code(.quotaExhausted)
        /// A 5xx answer (or any other status that is neither success nor a client error).
        public static let unavailable = Code(.unavailable)
        /// The entity does not exist: HTTP 404, TMDB `status_code` 34, an empty KOFIC `movieInfo`.
        public static let notFound = Code(.notFound)
        /// The upstream refused the request: other 4xx, other KOFIC faults, a Kakao `errorType`.
        public static let badRequest = Code(.badRequest)
        /// A success status whose body is not the expected JSON (e.g. truncated). Retriable.
        public static let malformed = Code(.malformed)
        /// A configuration value is missing or wrong (a base URL, a key file).
        public static let invalidConfiguration = Code(.invalidConfiguration)

        /// The code's name, with the source where the code carries one: `unauthorized(tmdb)`.
        public var description: String {
            if let source = self.source { return "\(self.base.rawValue)(\(source.rawValue))" }
            return self.base.rawValue
        }

        /// The code's name without its source, e.g. `unauthorized`, for metrics labels and dead-letter headers.
        public var name: String { self.base.rawValue }

        /// Whether this code is the same kind as `other`, whatever source either names.
        public func isSameKind(as other: Code) -> Bool { self.base == other.base }
    }

    /// What went wrong.
    public var code: Code
    /// The source that failed, when known.
    public var source: Source?
    /// What happened, for the operator: the upstream's own message where it sent one (shortened, keys removed).
    public var reason: String
    /// The HTTP status of the response, when the error came from one.
    public var status: Int?
    /// How long to wait before trying again, when the upstream said so (or, for a spent quota, until it resets).
    public var retryAfter: Duration?
    /// Where the error was made.
    public var file: String
    /// Where the error was made.
    public var line: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - source: The failing source, when known.
    ///   - reason: A description for the operator. It must not contain a secret.
    ///   - status: The response's HTTP status, if any.
    ///   - retryAfter: The delay the upstream asked for, if any.
    public init(
        _ code: Code,
        source: Source? = nil,
        _ reason: String,
        status: Int? = nil,
        retryAfter: Duration? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.source = source ?? code.source
        self.reason = reason
        self.status = status
        self.retryAfter = retryAfter
        self.file = file
        self.line = line
    }

    /// The error of a job whose source needs a key this worker was not given (``Code-swift.struct/missingKey(_:)``).
    public static func keyNotConfigured(_ source: Source) -> SourceError {
        SourceError(.missingKey(source), "\(source.keyVariable ?? source.rawValue) is not configured")
    }

    /// Whether trying the same job again later can succeed: true for ``Code-swift.struct/rateLimited``,
    /// ``Code-swift.struct/quotaExhausted``, ``Code-swift.struct/unavailable`` and ``Code-swift.struct/malformed``.
    public var isRetriable: Bool {
        switch self.code.base {
        case .rateLimited, .quotaExhausted, .unavailable, .malformed: true
        case .missingKey, .unauthorized, .sessionRefused, .notFound, .badRequest, .invalidConfiguration: false
        }
    }

    /// `<source> <code>: <reason>`, with the HTTP status and the retry delay when known. Never contains a secret.
    public var description: String {
        var text = ""
        if let source = self.source { text += "\(source.rawValue) " }
        text += "\(self.code.name): \(self.reason)"
        if let status = self.status { text += " (HTTP \(status))" }
        if let retryAfter = self.retryAfter { text += " (retry after \(retryAfter.components.seconds) s)" }
        return text
    }
}
