/// The validators of a response (`ETag`, `Last-Modified`), sent back as `If-None-Match` / `If-Modified-Since`.
public struct HTTPValidators: Hashable, Sendable, Codable {
    /// The `ETag` field, quotes and weakness prefix included (`W/"abc"`).
    public var etag: String?
    /// The `Last-Modified` field, as the server wrote it.
    public var lastModified: String?
    /// What the response these validators came with was kept as, so a `304` can name it: the image stage keeps
    /// the SHA-256 of the stored image here. `nil` where a `304` needs nothing (the fetch stage).
    public var content: String?

    /// Creates validators.
    ///
    /// - Parameters:
    ///   - etag: The `ETag` value, if any.
    ///   - lastModified: The `Last-Modified` value, if any.
    ///   - content: What the validated response was kept as, if anything.
    public init(etag: String? = nil, lastModified: String? = nil, content: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.content = content
    }

    /// Whether neither validator is present (nothing to revalidate with).
    public var isEmpty: Bool { self.etag == nil && self.lastModified == nil }
}

/// A store of response validators shared by fetches, keyed by the request's redacted URL.
///
/// ``HTTPFetcher`` reads it before a conditional request and writes it after a `200` that carried validators.
/// Implementations must be safe to call concurrently; a shared implementation (Redis, the store) may lose writes,
/// which costs only a full download.
public protocol ValidatorCache: Sendable {
    /// The validators stored for `key`, if any.
    ///
    /// - Parameter key: The request's redacted URL.
    /// - Returns: The stored validators, or `nil`.
    func validators(for key: String) async -> HTTPValidators?

    /// Stores (replaces) the validators of `key`.
    ///
    /// - Parameters:
    ///   - validators: The validators of the latest `200` response.
    ///   - key: The request's redacted URL.
    func store(_ validators: HTTPValidators, for key: String) async
}
