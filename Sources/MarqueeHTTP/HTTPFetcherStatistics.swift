/// Counters of an ``HTTPFetcher`` since it was created, for metrics.
public struct HTTPFetcherStatistics: Sendable, Hashable {
    /// Fetches that produced a response, by status code.
    public var responsesByStatus: [Int: Int] = [:]
    /// Fetches that failed, by ``HTTPFetchError/Code`` description (`timeout`, `tooLarge`, …).
    public var errorsByCode: [String: Int] = [:]
    /// New connections opened (libcurl's `CURLINFO_NUM_CONNECTS`, summed).
    public var connectionsOpened = 0
    /// Body bytes received over the wire.
    public var bytesDownloaded = 0
    /// Conditional requests sent (with `If-None-Match` or `If-Modified-Since` from the validator cache).
    public var conditionalRequests = 0

    /// Fetches that produced a response.
    public var responses: Int { self.responsesByStatus.values.reduce(0, +) }
    /// Fetches that failed.
    public var errors: Int { self.errorsByCode.values.reduce(0, +) }
    /// Responses `304 Not Modified`.
    public var notModified: Int { self.responsesByStatus[304, default: 0] }

    /// Creates empty statistics.
    public init() {}
}
