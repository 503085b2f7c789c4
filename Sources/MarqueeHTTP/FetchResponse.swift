/// The final response of a fetch, after redirects.
///
/// HTTP error statuses (4xx, 5xx) are responses, not errors: the caller decides what a 404 or a 503 means.
public struct FetchResponse: Sendable {
    /// The status code, e.g. `200` or `304`.
    public var status: Int
    /// The response header fields, names lowercased, in arrival order.
    public var headers: [HTTPHeader]
    /// The body, content-decoded (gzip, deflate, br, zstd as libcurl supports). Empty for `304`.
    public var body: [UInt8]
    /// `Retry-After` parsed (delta-seconds, or an HTTP-date relative to the arrival time), when present.
    public var retryAfter: Duration?
    /// The response's `ETag` / `Last-Modified`, when it carried either.
    public var validators: HTTPValidators?
    /// The URL of the final response (after redirects), redacted.
    public var effectiveURL: String
    /// The protocol version of the final response: `"1.0"`, `"1.1"`, `"2"` or `"3"`.
    public var httpVersion: String
    /// The time spent in transfers (all hops), from libcurl; rate-limit waits are not included.
    public var totalTime: Duration
    /// The body bytes received over the wire (all hops), before content decoding.
    public var downloadedBytes: Int
    /// The number of new connections the fetch opened (all hops); `0` when every hop reused a connection.
    public var newConnections: Int
    /// The number of redirects followed.
    public var redirectCount: Int

    /// Creates a response (for the fetcher, and for tests of code that consumes responses).
    ///
    /// ``validators`` are taken from `headers`.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields; names are lowercased.
    ///   - body: The decoded body.
    ///   - effectiveURL: The final URL, already redacted.
    ///   - retryAfter: The parsed `Retry-After`, if any.
    ///   - httpVersion: The protocol version.
    ///   - totalTime: The transfer time.
    ///   - downloadedBytes: The bytes received over the wire.
    ///   - newConnections: The connections opened.
    ///   - redirectCount: The redirects followed.
    public init(
        status: Int,
        headers: [HTTPHeader],
        body: [UInt8],
        effectiveURL: String,
        retryAfter: Duration? = nil,
        httpVersion: String = "1.1",
        totalTime: Duration = .zero,
        downloadedBytes: Int? = nil,
        newConnections: Int = 0,
        redirectCount: Int = 0
    ) {
        self.status = status
        self.headers = headers.map { HTTPHeader(name: $0.name.lowercased(), value: $0.value) }
        self.body = body
        self.effectiveURL = effectiveURL
        self.retryAfter = retryAfter
        self.httpVersion = httpVersion
        self.totalTime = totalTime
        self.downloadedBytes = downloadedBytes ?? body.count
        self.newConnections = newConnections
        self.redirectCount = redirectCount
        self.validators = nil
        let validators = HTTPValidators(etag: self.header("etag"), lastModified: self.header("last-modified"))
        self.validators = validators.isEmpty ? nil : validators
    }

    /// The value of the first header field named `name` (case-insensitive), if any.
    ///
    /// - Parameter name: The field name.
    /// - Returns: The field's value, or `nil`.
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return self.headers.first { $0.name == name }?.value
    }

    /// Whether the server answered `304 Not Modified` (the cached copy is still current).
    public var isNotModified: Bool { self.status == 304 }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(self.status) }
}
