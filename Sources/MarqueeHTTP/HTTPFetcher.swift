internal import CMarqueeCurl
internal import Ccurl
public import Logging
import MarqueeCore
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fetches URLs with libcurl's multi interface: many transfers in flight on one dedicated thread.
///
/// Each fetch waits for its bucket (``FetchRequest/limitKey``, or the URL's `host:port`) to admit it under the
/// configured ``HostLimit`` and any `Retry-After` block, adds validators from the ``ValidatorCache`` when
/// conditional, then runs on the fetcher's curl thread, following redirects itself so the image policy applies at
/// every hop. Connections (and HTTP/2 streams) are reused across fetches.
///
/// ```swift
/// let fetcher = try HTTPFetcher(configuration: .init(), validatorCache: InMemoryValidatorCache(), logger: logger)
/// let response = try await fetcher.fetch(FetchRequest(url: "https://api.themoviedb.org/3/movie/550?api_key=…"))
/// await fetcher.shutdown()
/// ```
///
/// - Important: Call ``shutdown()`` when done: it fails what is still queued or in flight with
///   ``HTTPFetchError/Code/shutdown`` and stops the thread. Dropping the last reference without it stops the
///   thread too, without waiting. In a `ServiceGroup`, the fetcher is a service that does so on graceful shutdown
///   (``run()``).
public final class HTTPFetcher: Service, Sendable {
    /// The configuration the fetcher was created with.
    public let configuration: HTTPFetcherConfiguration
    private let validatorCache: (any ValidatorCache)?
    private let logger: Logger
    private let multi: CurlMultiHandle
    private let limiter: HostLimiter
    private let counters = Mutex(HTTPFetcherStatistics())
    /// ``HTTPFetcherConfiguration/secretQueryParameters`` lowercased, made once rather than per fetch.
    private let secretNames: Set<String>

    /// Initialises libcurl once per process (`curl_global_init`); later calls do nothing.
    ///
    /// ``init(configuration:validatorCache:logger:)`` calls it; call it yourself early in `main` to do the
    /// initialisation before other threads start.
    public static func globalInit() {
        _ = curlGlobalInit
    }

    /// Creates a fetcher and starts its curl thread.
    ///
    /// - Parameters:
    ///   - configuration: Timeouts, caps, limits and policies.
    ///   - validatorCache: Where conditional requests find and store validators; `nil` for no revalidation.
    ///   - logger: Receives one debug line per fetch (redacted URL, status, time; never header values).
    /// - Throws: An ``HTTPFetchError`` if the configuration is invalid (``HTTPFetchError/Code/invalidRequest``)
    ///   or libcurl cannot be initialised (``HTTPFetchError/Code/other``).
    public init(
        configuration: HTTPFetcherConfiguration,
        validatorCache: (any ValidatorCache)? = nil,
        logger: Logger
    ) throws(HTTPFetchError) {
        try configuration.validate()
        Self.globalInit()
        guard curlGlobalInit == CURLE_OK else {
            throw HTTPFetchError(
                code: .other,
                reason: "curl_global_init failed: \(CurlCode(curlGlobalInit).message)",
                curlCode: CurlCode(curlGlobalInit)
            )
        }
        self.configuration = configuration
        self.secretNames = URLRedaction.names(configuration.secretQueryParameters)
        self.validatorCache = validatorCache
        self.logger = logger
        let wakeup = WakeupTarget()
        let limiter = HostLimiter(onEarlierDeadline: { wakeup.wake() })
        self.limiter = limiter
        self.multi = try CurlMultiHandle(configuration: configuration, limiter: limiter)
        wakeup.set(self.multi)
        self.multi.start()
    }

    deinit {
        self.limiter.close()
        self.multi.close()
    }

    /// Counters since the fetcher was created.
    public var statistics: HTTPFetcherStatistics { self.counters.withLock { $0 } }

    /// Fails queued and in-flight fetches with ``HTTPFetchError/Code/shutdown``, stops the curl thread and frees
    /// libcurl's handles; returns when that is done. Later fetches fail with ``HTTPFetchError/Code/shutdown``.
    public func shutdown() async {
        self.limiter.close()
        self.multi.close()
        await self.multi.stopped.wait()
    }

    /// Keeps the fetcher until graceful shutdown (or cancellation), then shuts it down (``shutdown()``): list it
    /// before the services that fetch through it, so it stops after them.
    public func run() async throws {
        try? await gracefulShutdown()
        await self.shutdown()
    }

    /// Sends `request` (a GET unless it says otherwise), following redirects of unsigned GET and HEAD requests.
    ///
    /// A `HEAD` returns without waiting for a body; a `PUT` uploads ``FetchRequest/body``; a request with
    /// ``FetchRequest/awsSigV4`` is signed by libcurl and never follows a redirect.
    ///
    /// - Parameter request: What to send.
    /// - Returns: The final response, whatever its status (4xx and 5xx are responses, not errors). For a
    ///   `429` or `503` with `Retry-After`, the request's bucket admits nothing more until then.
    /// - Throws: An ``HTTPFetchError`` when there is no response: timeouts, connection failures, a body over the
    ///   cap, too many redirects, an image host or address refused by the policy, an invalid URL, cancellation
    ///   of the calling task (``HTTPFetchError/Code/cancelled``) or ``shutdown()``.
    public func fetch(_ request: FetchRequest) async throws(HTTPFetchError) -> FetchResponse {
        // One scan of the URL gives its redacted form and its secrets; the first hop and the final URL are
        // usually this very URL, and reuse it (URLRedaction's character scans were a tenth of a fetch job's CPU).
        let scanned = URLRedaction.scan(request.url, secretNames: self.secretNames)
        let redactedURL = request.redactedURL(scannedRedaction: scanned.redacted)
        let secrets = scanned.secrets + (request.awsSigV4?.secrets ?? [])
        var logger = self.logger
        // Every line a fetch logs is at debug or trace level: the metadata is attached only when those are written.
        if logger.logLevel <= .debug {
            logger[metadataKey: MarqueeHTTPLoggingKeys.url] = "\(redactedURL)"
            if request.method != .get { logger[metadataKey: MarqueeHTTPLoggingKeys.method] = "\(request.method)" }
        }
        do {
            let response = try await self.fetch(
                request,
                redactedURL: redactedURL,
                scannedRedaction: scanned.redacted,
                logger: logger
            )
            self.counters.withLock { counters in
                counters.responsesByStatus[response.status, default: 0] += 1
                counters.connectionsOpened += response.newConnections
                counters.bytesDownloaded += response.downloadedBytes
            }
            logger.debug(
                "fetched",
                metadata: [
                    MarqueeHTTPLoggingKeys.status: "\(response.status)",
                    MarqueeHTTPLoggingKeys.milliseconds: "\(response.totalTime.roundedUpMilliseconds)",
                    MarqueeHTTPLoggingKeys.bytes: "\(response.body.count)",
                ]
            )
            return response
        } catch {
            // Scrub secrets libcurl might have echoed; name the redacted URL of the original request if no hop did.
            var error = error
            error.reason = URLRedaction.scrub(error.reason, secrets: secrets)
            if error.url == nil { error.url = redactedURL }
            self.counters.withLock { $0.errorsByCode[error.code.description, default: 0] += 1 }
            logger.debug("fetch failed", metadata: [MarqueeHTTPLoggingKeys.error: "\(error.code)"])
            throw error
        }
    }

    /// - Parameter scannedRedaction: `request.url` redacted with the configuration's secret parameters.
    private func fetch(
        _ request: FetchRequest,
        redactedURL: String,
        scannedRedaction: String,
        logger: Logger
    ) async throws(HTTPFetchError) -> FetchResponse {
        let configuration = self.configuration
        let secretNames = self.secretNames
        /// `url` redacted, reusing the scan of the request's URL when it is that URL.
        func redacted(_ url: String) -> String {
            url == request.url ? scannedRedaction : URLRedaction.scan(url, secretNames: secretNames).redacted
        }
        guard !Task.isCancelled else { throw .cancelled(url: redactedURL) }
        var url = try self.parse(request.url, redactedURL: redactedURL)
        if request.purpose == .image { try self.checkImageHost(url, redactedURL: redactedURL) }
        if request.body != nil, request.method != .put {
            throw HTTPFetchError(
                code: .invalidRequest,
                reason: "a \(request.method) request cannot carry a body (only PUT does)",
                url: redactedURL
            )
        }
        if let signing = request.awsSigV4 {
            let fields = [signing.provider, signing.accessKeyID, signing.secretAccessKey, signing.sessionToken ?? ""]
            guard !signing.provider.isEmpty, !signing.accessKeyID.isEmpty, !signing.secretAccessKey.isEmpty,
                !fields.contains(where: { $0.contains(where: { $0.isNewline || $0 == "\0" }) })
            else {
                // Never name the values: they are credentials.
                throw HTTPFetchError(
                    code: .invalidRequest,
                    reason: "AWS SigV4 credentials are empty or contain a line break or NUL",
                    url: redactedURL
                )
            }
        }
        for header in request.headers {
            guard Self.isValid(header) else {
                throw HTTPFetchError(
                    code: .invalidRequest,
                    reason: "header \"\(header.name)\" has an empty or invalid name, or a line break",
                    url: redactedURL
                )
            }
        }

        // Admission: Retry-After blocks, rate and concurrency of the bucket.
        let limitKey = request.limitKey ?? url.hostAndPort
        let limit = configuration.hostLimits[limitKey] ?? configuration.defaultHostLimit
        try await self.limiter.acquire(key: limitKey, limit: limit, url: redactedURL)
        defer { if limit != nil { self.limiter.release(key: limitKey) } }

        // Conditional request: validators of the last 200 for this URL.
        var conditionalLines: [String] = []
        let callerSetConditional = request.headers.contains {
            ["if-none-match", "if-modified-since"].contains($0.name.lowercased())
        }
        let isConditional = request.isConditional && request.method == .get && request.awsSigV4 == nil
        if isConditional, !callerSetConditional, let cache = self.validatorCache,
            let validators = await cache.validators(for: redactedURL)
        {
            if let etag = validators.etag { conditionalLines.append("If-None-Match: \(etag)") }
            if let lastModified = validators.lastModified {
                conditionalLines.append("If-Modified-Since: \(lastModified)")
            }
            if !conditionalLines.isEmpty { self.counters.withLock { $0.conditionalRequests += 1 } }
        }

        let maxBodyBytes = request.maxBodyBytes ?? configuration.maxBodyBytes
        let restrictsAddresses = request.purpose == .image && !configuration.allowsPrivateAddresses
        let origin = url
        // Signed requests never follow (the signature covers the host); nor do uploads and deletes.
        let followsRedirects = request.awsSigV4 == nil && (request.method == .get || request.method == .head)
        var extraLines: [String] = []
        if let token = request.awsSigV4?.sessionToken, let prefix = request.awsSigV4?.headerPrefix {
            extraLines.append("\(prefix)security-token: \(token)")
        }
        if request.method == .put, !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            // Without it libcurl would label the upload application/x-www-form-urlencoded.
            extraLines.append("Content-Type: application/octet-stream")
        }
        let deadline = ContinuousClock.now + configuration.totalTimeout
        var hopURL = request.url
        // The redacted URL of the hop that redirected to this one (`nil` for the first).
        var redirectedFrom: String?
        var redirects = 0
        var totalTime = Duration.zero
        var downloadedBytes = 0
        var newConnections = 0
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw HTTPFetchError(
                    code: .timeout,
                    reason: "the total timeout (\(configuration.totalTimeout)) passed while following redirects",
                    url: redacted(hopURL)
                )
            }
            // Caller headers (credentials) go to the request's origin only.
            let sameOrigin = url.scheme == origin.scheme && url.host == origin.host && url.port == origin.port
            let headerLines =
                (sameOrigin ? request.headers.map { "\($0.name): \($0.value)" } + extraLines : []) + conditionalLines
            let job = TransferJob(
                url: hopURL,
                headerLines: headerLines,
                timeout: remaining,
                maxBodyBytes: maxBodyBytes,
                restrictsAddresses: restrictsAddresses,
                method: request.method,
                body: request.body,
                awsSigV4: request.awsSigV4
            )
            let hopRedactedURL = redacted(hopURL)
            let outcome: TransferOutcome
            switch await self.multi.perform(job) {
            case .success(let value): outcome = value
            case .failure(var error):
                error.url = hopRedactedURL
                if let from = redirectedFrom, error.code == .addressNotAllowed {
                    throw Self.refusedRedirect(error, from: from, to: hopRedactedURL)
                }
                throw error
            }
            totalTime += outcome.totalTime
            downloadedBytes += outcome.downloadedBytes
            newConnections += outcome.newConnections

            if let location = outcome.redirectURL, followsRedirects {
                redirects += 1
                guard redirects <= configuration.maxRedirects else {
                    throw HTTPFetchError(
                        code: .tooManyRedirects,
                        reason: "more than \(configuration.maxRedirects) redirects",
                        url: redactedURL
                    )
                }
                hopURL = location
                let target = redacted(hopURL)
                do throws(HTTPFetchError) {
                    url = try self.parse(hopURL, redactedURL: target)
                    if request.purpose == .image { try self.checkImageHost(url, redactedURL: target) }
                } catch {
                    throw Self.refusedRedirect(error, from: hopRedactedURL, to: target)
                }
                redirectedFrom = hopRedactedURL
                logger.trace("redirect", metadata: ["marquee.http.location": "\(url.hostAndPort)"])
                continue
            }

            var retryAfter: Duration?
            if let value = outcome.headers.first(where: { $0.name == "retry-after" })?.value {
                retryAfter = RetryAfter.parse(value, now: time(nil))
            }
            let response = FetchResponse(
                status: outcome.status,
                headers: outcome.headers,
                body: outcome.body,
                effectiveURL: outcome.effectiveURL == hopURL ? hopRedactedURL : redacted(outcome.effectiveURL),
                retryAfter: retryAfter,
                httpVersion: outcome.httpVersion,
                totalTime: totalTime,
                downloadedBytes: downloadedBytes,
                newConnections: newConnections,
                redirectCount: redirects
            )
            if let retryAfter, response.status == 429 || response.status == 503 {
                let wait = min(retryAfter, configuration.maxRetryAfter)
                self.limiter.block(key: limitKey, until: outcome.completedAt + wait, limit: limit)
                logger.debug(
                    "bucket blocked by Retry-After",
                    metadata: [MarqueeHTTPLoggingKeys.limitKey: "\(limitKey)", "marquee.http.retry_after": "\(wait)"]
                )
            }
            if response.status == 200, isConditional, let cache = self.validatorCache,
                let validators = response.validators
            {
                await cache.store(validators, for: redactedURL)
            }
            return response
        }
    }

    /// `error` (a policy's refusal of a redirect's target: its scheme, host or address) saying it was a redirect,
    /// from which hop to which, both redacted; its ``HTTPFetchError/url`` is the target's.
    static func refusedRedirect(_ error: HTTPFetchError, from: String, to target: String) -> HTTPFetchError {
        var refused = error
        refused.reason = "redirect from \(from) to \(target) refused: \(error.reason)"
        refused.url = target
        return refused
    }

    /// Whether a caller's header can be sent: a name without `:`, and no line break in name or value.
    ///
    /// ASCII headers (all an adapter sends) are checked on their bytes: there each byte is a character but for
    /// "\r\n", which holds a line-break byte either way, and the line breaks are LF, VT, FF and CR. Anything
    /// else takes ``isValidCharacterwise(_:)``, the check before (a few percent of a fetch's CPU).
    static func isValid(_ header: HTTPHeader) -> Bool {
        let name = header.name.utf8
        let value = header.value.utf8
        guard name.allSatisfy({ $0 < 0x80 }), value.allSatisfy({ $0 < 0x80 }) else {
            return self.isValidCharacterwise(header)
        }
        let isLineBreak = { (byte: UInt8) in (0x0A...0x0D).contains(byte) }
        return !name.isEmpty && !name.contains(where: isLineBreak) && !value.contains(where: isLineBreak)
            && !name.contains(UInt8(ascii: ":"))
    }

    /// ``isValid(_:)``, character by character.
    static func isValidCharacterwise(_ header: HTTPHeader) -> Bool {
        !header.name.isEmpty && !(header.name + header.value).contains(where: \.isNewline) && !header.name.contains(":")
    }

    private func parse(_ url: String, redactedURL: String) throws(HTTPFetchError) -> CurlURL {
        switch CurlURL.parse(url) {
        case .success(let parsed): return parsed
        case .failure(let failure):
            throw HTTPFetchError(code: .invalidURL, reason: failure.reason, url: redactedURL)
        }
    }

    private func checkImageHost(_ url: CurlURL, redactedURL: String) throws(HTTPFetchError) {
        guard self.configuration.isImageHostAllowed(url.host) else {
            throw HTTPFetchError(
                code: .hostNotAllowed,
                reason: "image host \(url.host) is not on the image host allowlist",
                url: redactedURL
            )
        }
    }
}

/// `curl_global_init`'s result, computed once (Swift runs a global's initialiser exactly once, thread-safely).
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

/// Lets the limiter, created before the multi handle, wake the multi handle's loop.
/// Weak, so that the limiter (which holds this) does not keep the multi handle (which holds the limiter) alive.
private final class WakeupTarget: Sendable {
    private struct Box {
        weak var multi: CurlMultiHandle?
    }

    private let target = Mutex(Box())

    func set(_ multi: CurlMultiHandle) { self.target.withLock { $0.multi = multi } }

    func wake() { self.target.withLock { $0.multi }?.wakeup() }
}
