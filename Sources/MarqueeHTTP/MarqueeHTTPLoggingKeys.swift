/// Log metadata keys of the HTTP layer (dotted names, one place).
public enum MarqueeHTTPLoggingKeys {
    /// The redacted URL.
    public static let url = "marquee.url"
    /// The request method, when not `GET`.
    public static let method = "marquee.http.method"
    /// The response status.
    public static let status = "marquee.http.status"
    /// The rate-limit bucket.
    public static let limitKey = "marquee.http.limit_key"
    /// The transfer time in milliseconds.
    public static let milliseconds = "marquee.http.ms"
    /// The body size in bytes.
    public static let bytes = "marquee.http.bytes"
    /// The error code of a failed fetch.
    public static let error = "marquee.error"
}
