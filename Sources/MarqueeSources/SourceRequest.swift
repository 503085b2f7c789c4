/// One HTTP GET an adapter wants made for a fetch job.
///
/// ``url`` may carry a key (TMDB's `api_key`, KOFIC's `key`) and ``headers`` may carry one (Kakao's
/// `Authorization`); log, trace and put into errors only ``redactedURL`` and ``redactedHeaders``.
public struct SourceRequest: Sendable, CustomStringConvertible {
    /// The source the request goes to (for per-host rate limits and metrics).
    public var source: Source
    /// The URL to fetch, keys included.
    public var url: String
    /// ``url`` with every secret replaced by `REDACTED`.
    public var redactedURL: String
    /// Request headers (`User-Agent`, `Accept`, and Kakao's `Authorization: KakaoAK <key>`).
    public var headers: [(name: String, value: String)]
    /// Whether the fetch stage may send stored validators and store the answer's (conditional requests, keyed by
    /// ``redactedURL``). `false` for a signed-in user's data: its redacted URL is the same for every session, so a
    /// validator of one account must never answer for another. Default: `true`.
    public var isConditionalAllowed = true

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - source: The upstream.
    ///   - url: The URL with keys.
    ///   - redactedURL: The URL with every key replaced by `REDACTED`.
    ///   - headers: The request headers.
    public init(source: Source, url: String, redactedURL: String, headers: [(name: String, value: String)]) {
        self.source = source
        self.url = url
        self.redactedURL = redactedURL
        self.headers = headers
    }

    /// The method; every source endpoint is a GET.
    public var method: String { "GET" }

    /// ``headers`` with the value of `Authorization` replaced by `REDACTED`.
    public var redactedHeaders: [(name: String, value: String)] {
        self.headers.map { header in
            header.name.lowercased() == "authorization" ? (name: header.name, value: "REDACTED") : header
        }
    }

    /// `GET <redactedURL>`.
    public var description: String { "GET \(self.redactedURL)" }
}

extension SourceRequest {
    /// A JSON GET of `path` below `base` with `query` (secret items redacted in ``redactedURL``), sending
    /// `Accept: application/json`, the configured User-Agent and `headers`.
    /// A GET of `source`'s JSON API carrying its key as the query parameter `parameter` (a secret: redacted in
    /// the URL that is logged).
    ///
    /// - Throws: A ``SourceError`` (``SourceError/Code-swift.struct/missingKey(_:)``) when no key is configured.
    static func json(
        _ source: Source,
        key: Secret?,
        as parameter: String,
        base: String,
        path: [String],
        query: [QueryItem],
        userAgent: String
    ) throws(SourceError) -> SourceRequest {
        guard let key else { throw SourceError.keyNotConfigured(source) }
        return .json(
            source,
            base: base,
            path: path,
            query: [QueryItem(parameter, key.revealed, isSecret: true)] + query,
            userAgent: userAgent
        )
    }

    static func json(
        _ source: Source,
        base: String,
        path: [String],
        query: [QueryItem],
        userAgent: String,
        headers: [(name: String, value: String)] = []
    ) -> SourceRequest {
        let (url, redacted) = URLBuilder.build(base: base, path: path, query: query)
        return SourceRequest(
            source: source,
            url: url,
            redactedURL: redacted,
            headers: headers + [(name: "Accept", value: "application/json"), (name: "User-Agent", value: userAgent)]
        )
    }
}
