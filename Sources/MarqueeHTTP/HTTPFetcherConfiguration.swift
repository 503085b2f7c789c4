/// A rate and concurrency limit for one bucket (a host, or a ``FetchRequest/limitKey``).
public struct HostLimit: Hashable, Sendable {
    /// The sustained request rate of the token bucket; `.infinity` for no rate limit.
    public var requestsPerSecond: Double
    /// How many requests may start back to back after an idle period (the bucket's size). At least 1.
    public var burst: Int
    /// The most requests of the bucket in flight at once; `Int.max` for no limit.
    public var maxConcurrent: Int

    /// Creates a limit.
    ///
    /// - Parameters:
    ///   - requestsPerSecond: The sustained rate; `.infinity` for none.
    ///   - burst: The bucket size. Default: 1.
    ///   - maxConcurrent: The most requests in flight. Default: `Int.max` (no limit).
    public init(requestsPerSecond: Double, burst: Int = 1, maxConcurrent: Int = .max) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.maxConcurrent = maxConcurrent
    }

    /// Checks the values.
    ///
    /// - Throws: An ``HTTPFetchError`` with code ``HTTPFetchError/Code/invalidRequest`` naming the bad value.
    func validate(name: String) throws(HTTPFetchError) {
        guard self.requestsPerSecond > 0, !self.requestsPerSecond.isNaN else {
            throw HTTPFetchError(code: .invalidRequest, reason: "\(name): requestsPerSecond must be > 0")
        }
        guard self.burst >= 1 else {
            throw HTTPFetchError(code: .invalidRequest, reason: "\(name): burst must be ≥ 1")
        }
        guard self.maxConcurrent >= 1 else {
            throw HTTPFetchError(code: .invalidRequest, reason: "\(name): maxConcurrent must be ≥ 1")
        }
    }
}

/// The settings of an ``HTTPFetcher``.
///
/// Every value has a default suited to the public upstream APIs; construct with `init()` and change what differs.
public struct HTTPFetcherConfiguration: Sendable {
    /// The longest wait for a connection (TCP and TLS handshake). Default: 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// The longest a fetch's transfers may take, redirects included (rate-limit waits excluded). Default: 30 s.
    public var totalTimeout: Duration = .seconds(30)
    /// With ``lowSpeedTime``: a transfer slower than this many bytes per second for that long is aborted as a
    /// timeout. `0` disables the check. Default: 1024 (1 KiB/s).
    public var lowSpeedLimit: Int = 1024
    /// See ``lowSpeedLimit``. Default: 15 s.
    public var lowSpeedTime: Duration = .seconds(15)
    /// The largest body accepted, after content decoding (so a gzip bomb is cut off too). Default: 20 MiB.
    public var maxBodyBytes: Int = 20 * 1024 * 1024
    /// The most redirects one fetch follows. Default: 5.
    public var maxRedirects: Int = 5
    /// The `User-Agent` sent with every request. Default: `Marquee/0.1 (+https://github.com/marquee)`.
    public var userAgent: String = "Marquee/0.1 (+https://github.com/marquee)"
    /// The `Accept-Encoding` offered: `""` offers every encoding this libcurl decodes (gzip, deflate, and br or
    /// zstd when built in); `nil` asks for none. Bodies are always returned decoded. Default: `""`.
    public var acceptEncoding: String? = ""
    /// Whether to negotiate HTTP/2 over TLS (ALPN), falling back to HTTP/1.1; cleartext stays HTTP/1.1.
    /// Default: `true`.
    public var prefersHTTP2: Bool = true
    /// A PEM CA bundle to verify servers with, instead of the system's. Verification itself cannot be turned off.
    /// Default: `nil` (the system bundle).
    public var caBundlePath: String?
    /// The most connections to one host at once (libcurl queues transfers beyond it; HTTP/2 multiplexes).
    /// `0` for no limit. Default: 16.
    public var maxConnectionsPerHost: Int = 16
    /// The most connections at once, all hosts together; also the size of the idle-connection cache.
    /// Default: 256.
    public var maxTotalConnections: Int = 256
    /// Rate and concurrency limits by bucket key: a ``FetchRequest/limitKey``, or `host:port` such as
    /// `api.themoviedb.org:443`. Default: empty (see ``recommendedHostLimits``).
    public var hostLimits: [String: HostLimit] = [:]
    /// The limit of a bucket missing from ``hostLimits``; `nil` for unlimited. Default: `nil`.
    public var defaultHostLimit: HostLimit?
    /// The longest a `Retry-After` may block a bucket; longer values are shortened to this. Default: 10 min.
    public var maxRetryAfter: Duration = .seconds(600)
    /// The hosts ``FetchRequest/Purpose/image`` requests may reach (at every redirect): exact names, or
    /// `*.suffix` for any subdomain of `suffix` (not `suffix` itself). Matching ignores case and a trailing dot.
    ///
    /// Default: `image.tmdb.org`, `covers.openlibrary.org`, `archive.org` and `*.archive.org` (where Open Library
    /// covers redirect), `search1.kakaocdn.net` … `search4.kakaocdn.net` (Kakao thumbnails), `t1.daumcdn.net`.
    public var imageHostAllowlist: [String] = [
        "image.tmdb.org",
        "covers.openlibrary.org",
        "archive.org",
        "*.archive.org",
        "search1.kakaocdn.net",
        "search2.kakaocdn.net",
        "search3.kakaocdn.net",
        "search4.kakaocdn.net",
        "t1.daumcdn.net",
    ]
    /// Whether ``FetchRequest/Purpose/image`` requests may connect to loopback, private (RFC 1918, CGNAT),
    /// link-local, unique-local, multicast, reserved or unspecified addresses. The check applies to the address
    /// actually connected to, after name resolution. Tests and the local emulator set `true`. Default: `false`.
    public var allowsPrivateAddresses: Bool = false
    /// The query parameters whose values are secrets, redacted in logs, errors and cache keys (case-insensitive).
    /// Default: `api_key`, `key`, `serviceKey`, `apikey`, `access_token`.
    public var secretQueryParameters: [String] = URLRedaction.defaultSecretParameters

    /// Creates a configuration with every default.
    public init() {}

    /// Polite limits for the public upstream APIs (docs/design.md, "Sources"), to merge into ``hostLimits``.
    ///
    /// TMDB about 40 req/s (its limit is about 50 per IP), Open Library 1 req/s, Kakao 10 req/s.
    public static let recommendedHostLimits: [String: HostLimit] = [
        "api.themoviedb.org:443": HostLimit(requestsPerSecond: 40, burst: 10, maxConcurrent: 20),
        "openlibrary.org:443": HostLimit(requestsPerSecond: 1, burst: 1, maxConcurrent: 2),
        "dapi.kakao.com:443": HostLimit(requestsPerSecond: 10, burst: 5, maxConcurrent: 5),
    ]

    /// Whether `host` is on ``imageHostAllowlist``.
    ///
    /// - Parameter host: A host name or address, as in a URL.
    /// - Returns: `true` if an exact entry or a `*.suffix` entry matches.
    public func isImageHostAllowed(_ host: String) -> Bool {
        HostPolicy.matches(host, allowlist: self.imageHostAllowlist)
    }

    /// Checks the values.
    ///
    /// - Throws: An ``HTTPFetchError`` with code ``HTTPFetchError/Code/invalidRequest`` naming the bad value.
    public func validate() throws(HTTPFetchError) {
        func fail(_ reason: String) -> HTTPFetchError { HTTPFetchError(code: .invalidRequest, reason: reason) }
        guard self.connectTimeout > .zero else { throw fail("connectTimeout must be > 0") }
        guard self.totalTimeout > .zero else { throw fail("totalTimeout must be > 0") }
        guard self.lowSpeedLimit >= 0, self.lowSpeedTime >= .zero else { throw fail("low-speed limit must be ≥ 0") }
        guard self.maxBodyBytes > 0 else { throw fail("maxBodyBytes must be > 0") }
        guard self.maxRedirects >= 0 else { throw fail("maxRedirects must be ≥ 0") }
        guard self.maxConnectionsPerHost >= 0, self.maxTotalConnections >= 0 else {
            throw fail("connection limits must be ≥ 0")
        }
        guard !self.userAgent.contains(where: \.isNewline) else { throw fail("userAgent contains a line break") }
        for (key, limit) in self.hostLimits { try limit.validate(name: "hostLimits[\(key)]") }
        try self.defaultHostLimit?.validate(name: "defaultHostLimit")
    }
}
