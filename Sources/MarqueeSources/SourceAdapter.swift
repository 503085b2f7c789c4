public import MarqueeCore

/// Turns fetch jobs into requests and responses into results, for one upstream.
///
/// Adapters are pure: no I/O, no clock (the caller passes `fetchedAt`), so every rule is testable on recorded
/// responses.
public protocol SourceAdapter: Sendable {
    /// The request for `job`.
    ///
    /// - Throws: A ``SourceError`` when the job belongs to another source
    ///   (``SourceError/Code-swift.struct/invalidConfiguration``) or the source's key is not configured
    ///   (``SourceError/Code-swift.struct/missingKey(_:)``).
    func request(for job: FetchJob) throws(SourceError) -> SourceRequest

    /// The records, follow-up jobs and image jobs in `response` to `job`'s request.
    ///
    /// - Parameters:
    ///   - response: The upstream's answer, whatever its status.
    ///   - job: The job the request was made for.
    ///   - fetchedAt: When the response arrived, in milliseconds since the epoch; stamped on every record and
    ///     used to turn an HTTP-date `Retry-After` into a delay.
    /// - Throws: A ``SourceError`` classifying an error answer or a body that is not the expected JSON.
    func parse(_ response: SourceResponse, for job: FetchJob, fetchedAt: Int64) throws(SourceError) -> SourceResult
}
