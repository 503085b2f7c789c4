/// One request for ``HTTPFetcher/fetch(_:)``: a GET by default; `HEAD`, `PUT` (with a body) and `DELETE` too,
/// optionally signed with AWS Signature Version 4.
public struct FetchRequest: Sendable {
    /// The HTTP method.
    public enum Method: String, Sendable, Hashable, CustomStringConvertible {
        /// `GET`: the only method that follows redirects unsigned and revalidates with the validator cache.
        case get = "GET"
        /// `HEAD`: the status and headers only; the fetcher does not wait for a body, and `Content-Length` is not
        /// held to the body cap (it describes the resource, not this response).
        case head = "HEAD"
        /// `PUT`: uploads ``FetchRequest/body`` (empty when `nil`) with its `Content-Length`.
        case put = "PUT"
        /// `DELETE`.
        case delete = "DELETE"

        /// The method name, e.g. `PUT`.
        public var description: String { self.rawValue }
    }

    /// What a request is for; image requests are held to the SSRF policy.
    public enum Purpose: Sendable, Hashable {
        /// An upstream API call (TMDB, KOFIC, Kakao, Open Library): any host, any address.
        case api
        /// An image download whose URL came from upstream data: the host must be on
        /// ``HTTPFetcherConfiguration/imageHostAllowlist`` (checked at every redirect too), and the address it
        /// resolves to must be public unless ``HTTPFetcherConfiguration/allowsPrivateAddresses``.
        case image
    }

    /// The absolute `http` or `https` URL.
    public var url: String
    /// Extra request headers, e.g. `Authorization: KakaoAK …`.
    ///
    /// Values are never logged. They are dropped when a redirect leaves the request's origin (scheme, host, port).
    public var headers: [HTTPHeader]
    /// What the request is for. Default: ``Purpose/api``.
    public var purpose: Purpose
    /// The rate-limit and concurrency bucket (a key of ``HTTPFetcherConfiguration/hostLimits``).
    ///
    /// Default: `nil`, which means the URL's `host:port` (e.g. `api.themoviedb.org:443`).
    public var limitKey: String?
    /// Whether to revalidate with the fetcher's ``ValidatorCache`` (`If-None-Match` / `If-Modified-Since`).
    ///
    /// Default: `true`. Has no effect when the fetcher has no cache.
    public var isConditional: Bool
    /// The largest body accepted, in bytes (after content decoding).
    ///
    /// Default: `nil`, which means ``HTTPFetcherConfiguration/maxBodyBytes``.
    public var maxBodyBytes: Int?
    /// The HTTP method. Default: ``Method/get``.
    ///
    /// Only unsigned `GET` and `HEAD` requests follow redirects; any other request returns a `3xx` as its response.
    public var method: Method
    /// The body uploaded with ``Method/put`` (sent as given, with `Content-Length`; `nil` sends an empty body).
    ///
    /// Default: `nil`. A body with any other method is refused (``HTTPFetchError/Code/invalidRequest``). Without a
    /// `Content-Type` header the upload is sent as `application/octet-stream`.
    public var body: [UInt8]?
    /// Signs the request with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`). Default: `nil`.
    ///
    /// A signed request never follows redirects (the signature covers the host), and is never conditional.
    public var awsSigV4: AWSSigV4?

    private var redactedURLOverride: String?

    /// The URL as it may appear in logs, errors and as the validator-cache key.
    ///
    /// Default: ``url`` with the values of the usual secret query parameters (`api_key`, `key`, `serviceKey`,
    /// `apikey`, `access_token`) and any userinfo password replaced by `REDACTED`. ``HTTPFetcher`` uses its
    /// configuration's ``HTTPFetcherConfiguration/secretQueryParameters`` instead of that default list unless this
    /// property was set explicitly.
    public var redactedURL: String {
        get {
            self.redactedURLOverride
                ?? URLRedaction.redact(self.url, secretParameters: URLRedaction.defaultSecretParameters)
        }
        set { self.redactedURLOverride = newValue }
    }

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - url: The absolute `http` or `https` URL.
    ///   - headers: Extra request headers.
    ///   - purpose: What the request is for.
    ///   - limitKey: The rate-limit bucket; `nil` for the URL's `host:port`.
    ///   - method: The HTTP method.
    ///   - body: The body of a `PUT`.
    ///   - awsSigV4: AWS Signature Version 4 credentials to sign the request with.
    public init(
        url: String,
        headers: [HTTPHeader] = [],
        purpose: Purpose = .api,
        limitKey: String? = nil,
        method: Method = .get,
        body: [UInt8]? = nil,
        awsSigV4: AWSSigV4? = nil
    ) {
        self.url = url
        self.headers = headers
        self.purpose = purpose
        self.limitKey = limitKey
        self.isConditional = true
        self.maxBodyBytes = nil
        self.method = method
        self.body = body
        self.awsSigV4 = awsSigV4
    }

    /// The redacted URL given ``url`` already redacted under the fetcher's secret-parameter list (an explicitly
    /// set ``redactedURL`` wins).
    func redactedURL(scannedRedaction: String) -> String {
        self.redactedURLOverride ?? scannedRedaction
    }
}
