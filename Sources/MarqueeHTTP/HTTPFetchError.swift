public import MarqueeCore

/// An error raised by ``HTTPFetcher``: the fetch produced no HTTP response.
///
/// HTTP error statuses are not errors (they are ``FetchResponse``s). The ``code`` says what kind of failure it is
/// and ``isRetriable`` whether the same request may succeed later. ``reason`` and ``description`` name the
/// redacted URL only: never a key, a password or a header value.
public struct HTTPFetchError: RetriableError, Sendable {
    /// The kind of an ``HTTPFetchError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case timeout
            case connectFailed
            case connectionReset
            case transfer
            case tooLarge
            case tooManyRedirects
            case hostNotAllowed
            case addressNotAllowed
            case tls
            case invalidURL
            case invalidRequest
            case cancelled
            case shutdown
            case other
        }

        fileprivate let value: Value

        /// The connect timeout, the total timeout or the low-speed limit was hit.
        public static let timeout = Code(value: .timeout)
        /// No connection could be made: refused, unreachable, or the host name did not resolve.
        public static let connectFailed = Code(value: .connectFailed)
        /// The connection broke mid-request: reset, closed early, nothing or a partial body received.
        public static let connectionReset = Code(value: .connectionReset)
        /// Another failure of the transfer itself (HTTP/2 stream error, malformed response, bad encoding).
        public static let transfer = Code(value: .transfer)
        /// The body is larger than the cap (announced by `Content-Length`, or counted while downloading).
        public static let tooLarge = Code(value: .tooLarge)
        /// More redirects than ``HTTPFetcherConfiguration/maxRedirects``.
        public static let tooManyRedirects = Code(value: .tooManyRedirects)
        /// An image request (or one of its redirects) named a host not on the image allowlist.
        public static let hostNotAllowed = Code(value: .hostNotAllowed)
        /// An image request resolved to a loopback, private, link-local or otherwise non-public address.
        public static let addressNotAllowed = Code(value: .addressNotAllowed)
        /// The TLS handshake or the certificate verification failed.
        public static let tls = Code(value: .tls)
        /// The URL is malformed or not `http`/`https`.
        public static let invalidURL = Code(value: .invalidURL)
        /// The request is malformed (e.g. a header containing a line break).
        public static let invalidRequest = Code(value: .invalidRequest)
        /// The calling task was cancelled.
        public static let cancelled = Code(value: .cancelled)
        /// The fetcher was shut down before the fetch completed.
        public static let shutdown = Code(value: .shutdown)
        /// Anything else libcurl reported (out of memory, internal errors).
        public static let other = Code(value: .other)

        public var description: String {
            switch self.value {
            case .timeout: "timeout"
            case .connectFailed: "connectFailed"
            case .connectionReset: "connectionReset"
            case .transfer: "transfer"
            case .tooLarge: "tooLarge"
            case .tooManyRedirects: "tooManyRedirects"
            case .hostNotAllowed: "hostNotAllowed"
            case .addressNotAllowed: "addressNotAllowed"
            case .tls: "tls"
            case .invalidURL: "invalidURL"
            case .invalidRequest: "invalidRequest"
            case .cancelled: "cancelled"
            case .shutdown: "shutdown"
            case .other: "other"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, for an operator (no secrets).
    public var reason: String
    /// The redacted URL of the request (the hop that failed, for redirects).
    public var url: String?
    /// libcurl's result code, when the failure came from libcurl.
    public var curlCode: CurlCode?
    /// The error this one wraps, if any.
    public var underlying: (any Error)?
    /// Where the error was raised.
    public var file: String
    /// Where the error was raised.
    public var line: Int

    /// Whether the same request may succeed later: timeouts and connection failures are retriable; policy
    /// refusals, size caps, bad URLs, redirect loops and TLS failures are not; neither are cancellation and
    /// shutdown (the work was abandoned, not failed).
    /// Whether the fetch ended because its task was cancelled or the fetcher shut down: nothing is known about the
    /// request, and a stage hands the job back uncommitted (it runs again) instead of routing it.
    public var isCancellation: Bool {
        self.code == .cancelled || self.code == .shutdown
    }

    public var isRetriable: Bool {
        switch self.code.value {
        case .timeout, .connectFailed, .connectionReset, .transfer: true
        default: false
        }
    }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What happened; must contain no secret.
    ///   - url: The redacted URL.
    ///   - curlCode: libcurl's result code, if any.
    ///   - underlying: The wrapped error, if any.
    public init(
        code: Code,
        reason: String,
        url: String? = nil,
        curlCode: CurlCode? = nil,
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.url = url
        self.curlCode = curlCode
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    public var description: String {
        var text = "HTTPFetchError.\(self.code): \(self.reason)"
        if let url { text += " (GET \(url))" }
        if let curlCode { text += " [\(curlCode)]" }
        return text
    }
}

extension HTTPFetchError {
    static func cancelled(url: String?, file: String = #fileID, line: Int = #line) -> HTTPFetchError {
        HTTPFetchError(code: .cancelled, reason: "the fetch was cancelled", url: url, file: file, line: line)
    }

    static func shutdown(url: String?, file: String = #fileID, line: Int = #line) -> HTTPFetchError {
        HTTPFetchError(code: .shutdown, reason: "the HTTP fetcher is shut down", url: url, file: file, line: line)
    }
}
