public import MarqueeCore

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

/// An upstream's answer, as the HTTP layer received it.
public struct SourceResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, names lowercased.
    public var headers: [(name: String, value: String)]
    /// The body, decompressed.
    public var body: [UInt8]

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The headers; names are compared case-insensitively anyway.
    ///   - body: The body bytes.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return self.headers.first(where: { $0.name.lowercased() == lower })?.value
    }
}

/// What a response yields: records for the index stage, follow-up fetch jobs and image jobs.
public struct SourceResult: Sendable, Hashable {
    /// Records for `marquee.records`.
    public var records: [Record]
    /// Follow-up jobs for `marquee.fetch`.
    public var fetchJobs: [FetchJob]
    /// Downloads for `marquee.images`.
    public var imageJobs: [ImageJob]
    /// Follow-ups the adapter left out because they would not pass the payload checks of the next stage (e.g.
    /// an Open Library edition key where a work id is needed), one line each, for the worker's log.
    public var skipped: [String]

    /// Creates a result.
    public init(records: [Record] = [], fetchJobs: [FetchJob] = [], imageJobs: [ImageJob] = [], skipped: [String] = []) {
        self.records = records
        self.fetchJobs = fetchJobs
        self.imageJobs = imageJobs
        self.skipped = skipped
    }

    /// Adds a follow-up fetch job if it passes ``FetchJob/decode(json:)`` (what the fetch stage will check),
    /// and is not already queued; otherwise notes it in ``skipped``.
    mutating func add(_ job: FetchJob) {
        do {
            let checked = try FetchJob.decode(json: job.json)
            if !self.fetchJobs.contains(checked) { self.fetchJobs.append(checked) }
        } catch {
            self.skipped.append("\(job.kind) \(job.dedupeKey.shortened(to: 120)): \(error)")
        }
    }

    /// Adds an image job if it passes ``ImageJob/decode(_:)`` and is not already queued; otherwise notes it in
    /// ``skipped``.
    mutating func add(_ job: ImageJob) {
        do {
            let checked = try ImageJob.decode(job.encoded())
            if !self.imageJobs.contains(checked) { self.imageJobs.append(checked) }
        } catch {
            self.skipped.append("image \(job.url.shortened(to: 120)): \(error)")
        }
    }
}

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
