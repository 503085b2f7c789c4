public import Logging
public import MarqueeCore
public import MarqueeHTTP
import MarqueeJSON
public import MarqueeLimits
public import MarqueePipeline
public import MarqueeSources

/// The fetch stage's handler: one fetch job → one upstream call → records, image jobs and follow-up fetch jobs
/// (docs/design.md, "Topics").
///
/// How failures are sorted:
///
/// | what happened | outcome |
/// |---|---|
/// | timeout, connection reset, 5xx, 429, a body cut short or garbled | transient (a `Retry-After` is the minimum wait) |
/// | 404 for a detail, another 4xx, an image URL off the allowlist | permanent |
/// | 401/403 (KOFIC: its key error), or an outage of the source | the source pauses for the pipeline (``SourceLimits``): held |
/// | the source is paused, or the KOFIC key's daily budget is spent | held: the job waits in a retry tier, no attempt spent |
/// | a signed-in account's session refused (TMDB `status_code` 3/17) | that account pauses for the pipeline: held; TMDB goes on |
/// | no key configured for the source | held (this worker's configuration; other sources go on) |
/// | a payload that is not a fetch job | poison |
/// | the fetch was cancelled (shutdown) | none: handed back uncommitted, it runs again |
///
/// Every request first waits for ``SourceLimits/admit(_:)``: the source's pace for the whole pipeline, its
/// daily budget, and whether it is paused.
///
/// A 304 (the upstream's data did not change since the validators this worker stored) ends the job with no
/// outputs: what it would produce was produced when the data was fetched. Validators are stored only after a
/// response was parsed and its outputs were delivered (``StageJob/whenDelivered(_:)``): a body that failed to
/// parse is downloaded again on the retry, and so is one whose outputs a crash or a broker failure lost.
public struct FetchHandler: StageHandler {
    private let adapters: SourceAdapters
    private let fetcher: HTTPFetcher
    private let validators: (any ValidatorCache)?
    private let limits: SourceLimits
    private let onResponse: (@Sendable (_ source: String, _ status: String) -> Void)?
    private let repeatedRecords: RepeatedRecords
    private let logger: Logger

    /// - Parameters:
    ///   - validators: Where ETag / Last-Modified of parsed responses are kept for conditional requests;
    ///     `nil` sends no conditional requests.
    ///   - limits: The sources' rate limits, daily budgets and pauses, held with the other workers.
    ///   - repeatedRecords: The genre records of movie details this worker delivered lately, left out of the next
    ///     details that repeat them.
    public init(
        adapters: SourceAdapters,
        fetcher: HTTPFetcher,
        validators: (any ValidatorCache)?,
        limits: SourceLimits,
        onResponse: (@Sendable (_ source: String, _ status: String) -> Void)? = nil,
        repeatedRecords: RepeatedRecords = RepeatedRecords(),
        logger: Logger
    ) {
        self.repeatedRecords = repeatedRecords
        self.onResponse = onResponse
        self.adapters = adapters
        self.fetcher = fetcher
        self.validators = validators
        self.limits = limits
        self.logger = logger
    }

    public func handle(_ job: StageJob) async throws -> [StageOutput] {
        let fetchJob: FetchJob
        do {
            fetchJob = try FetchJob.decode(job.payload)
        } catch {
            throw StageError.poison(error)
        }
        let source = self.adapters.source(of: fetchJob)
        let request: SourceRequest
        do {
            request = try self.adapters.request(for: fetchJob)
        } catch {
            throw Self.stageError(error, source: source)
        }

        var fetch = FetchRequest(
            url: request.url,
            headers: request.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
            purpose: .api,
            limitKey: source.rawValue
        )
        fetch.redactedURL = request.redactedURL
        fetch.isConditional = false  // the handler sends the validators itself (stored only after a good parse)
        var cached: HTTPValidators?
        let validatorCache = request.isConditionalAllowed ? self.validators : nil
        if let validatorCache {
            job.enter("reading validators")
            cached = await validatorCache.validators(for: request.redactedURL)
        }
        if let etag = cached?.etag { fetch.headers.append(HTTPHeader(name: "If-None-Match", value: etag)) }
        if let lastModified = cached?.lastModified {
            fetch.headers.append(HTTPHeader(name: "If-Modified-Since", value: lastModified))
        }

        job.enter("waiting for the source's limit")
        let ticket: SourceTicket
        // A signed-in account's own pause beside the source's: a refused session holds that account's jobs alone.
        // An account ticket is reported only once TMDB answered about the session (a probe left unreported stays a
        // pause: the next probe comes later), so a request that never reached TMDB cannot resume the account.
        var accountTicket: SourceTicket?
        do {
            if let account = fetchJob.tmdbAccountLabel {
                accountTicket = try await self.limits.admit(Self.accountLimit(account))
            }
            ticket = try await self.limits.admit(source.rawValue)
        } catch let held as SourceHeld {
            throw StageError.held(held.reason, wait: held.wait)
        }

        let response: FetchResponse
        job.enter("fetching")
        do {
            response = try await self.fetcher.fetch(fetch)
            self.onResponse?(source.rawValue, String(response.status))
        } catch {
            if error.isCancellation { throw CancellationError() }  // shutdown: handed back, it runs again
            self.onResponse?(source.rawValue, "error")
            guard error.isRetriable else {
                await self.limits.report(ticket, .answered)
                throw StageError.permanent(error.description)
            }
            if let held = await self.limits.report(ticket, .failed(error.code.description)) {
                throw StageError.held(held.reason, wait: held.wait)
            }
            throw StageError.transient(error.description)
        }
        if response.isNotModified, cached != nil {
            await self.limits.report(ticket, .answered)
            if let accountTicket { await self.limits.report(accountTicket, .answered) }
            return []
        }

        let result: SourceResult
        do {
            result = try self.adapters.parse(
                SourceResponse(
                    status: response.status,
                    headers: response.headers.map { ($0.name, $0.value) },
                    body: response.body
                ),
                for: fetchJob,
                fetchedAt: Int64(JobID.nowMilliseconds())
            )
        } catch {
            if let accountTicket {
                if error.code == .sessionRefused {
                    await self.limits.report(ticket, .answered)
                    let reason = error.reason + self.signInHint(fetchJob.tmdbAccountLabel)
                    if let held = await self.limits.report(accountTicket, .refused(reason)) {
                        throw StageError.held(held.reason, wait: held.wait)
                    }
                    throw Self.stageError(error, source: source)
                }
                // TMDB answered past the session (a 404, a malformed body …); a 429, a 5xx or a refused key says
                // nothing of it.
                if response.status != 429, response.status < 500, !error.code.isSameKind(as: .unauthorized(source)) {
                    await self.limits.report(accountTicket, .answered)
                }
            }
            if error.code == .quotaExhausted {
                await self.limits.report(ticket, .answered)
                await self.limits.budgetExhausted(source.rawValue)
                throw StageError.held(error.reason, wait: error.retryAfter ?? .seconds(600))
            }
            let stageError = Self.stageError(error, source: source)
            let outcome: SourceRequestResult =
                if error.code.isSameKind(as: .unauthorized(source)) {
                    .refused(stageError.reason)
                } else if response.status == 429 {
                    .throttled(retryAfter: response.retryAfter)
                } else if response.status >= 500 {
                    .failed("HTTP \(response.status)")
                } else {
                    .answered
                }
            if let held = await self.limits.report(ticket, outcome) {
                throw StageError.held(held.reason, wait: held.wait)
            }
            throw stageError
        }
        await self.limits.report(ticket, .answered)
        if let accountTicket { await self.limits.report(accountTicket, .answered) }
        if !result.skipped.isEmpty {
            // Follow-ups the adapter left out because the next stage would refuse them (an edition key where a
            // work id is needed, …): worth a line, not a failure.
            job.logger.notice(
                "follow-ups left out",
                metadata: ["marquee.skipped": "\(result.skipped.joined(separator: "; "))"]
            )
        }
        if let validators = response.validators, let cache = validatorCache {
            // Only once the outputs are durable: a 304 produces nothing, so validators stored before a crash
            // that lost the outputs would lose them for good.
            let url = request.redactedURL
            job.whenDelivered { await cache.store(validators, for: url) }
        }
        // Why this crawl was made travels with everything it spawns, down to the movie records the store keeps it
        // for: the root's reason, or its kind's when the root came without one; a change-feed page's details are
        // refreshed because the movie changed.
        let reason = (job.envelope.refresh ?? RefreshReason.implied(by: fetchJob)).spawned(by: fetchJob)
        guard case .tmdbMovie = fetchJob else { return Self.outputs(result, refresh: reason) }
        // The genres a details answer names in passing go once an hour, not with every movie (a genre list,
        // `tmdb.genres`, always sends its own).
        var details = result
        let now = ContinuousClock.now
        details.records.removeAll { $0.kind == .genre && self.repeatedRecords.isRepeat($0, now: now) }
        let genres = details.records.filter { $0.kind == .genre }
        if !genres.isEmpty {
            let repeated = self.repeatedRecords
            job.whenDelivered { repeated.remember(genres, at: now) }
        }
        return Self.outputs(details, refresh: reason)
    }

    /// The stage outputs of a parsed response: records, image jobs, follow-up fetch jobs (each keyed by its
    /// entity, so one entity's messages share a partition).
    ///
    /// - Parameter refresh: The refresh reason each output's envelope carries; `nil`: the job's.
    public static func outputs(_ result: SourceResult, refresh: RefreshReason? = nil) -> [StageOutput] {
        var outputs: [StageOutput] = []
        outputs.reserveCapacity(result.records.count + result.imageJobs.count + result.fetchJobs.count)
        // Records are written into one buffer, which grows once a job, and copied out at their size: a review of
        // a few kilobytes grew a buffer of its own three times.
        var writer = JSONWriter(capacity: 4096)
        for record in result.records {
            writer.removeAll()
            record.write(to: &writer)
            outputs.append(
                StageOutput(stage: "records", key: record.dedupeKey, payload: Array(writer.bytes), refresh: refresh)
            )
        }
        for image in result.imageJobs {
            outputs.append(
                StageOutput(stage: "images", key: image.dedupeKey, payload: image.encoded(), refresh: refresh)
            )
        }
        for job in result.fetchJobs {
            outputs.append(StageOutput(stage: "fetch", key: job.dedupeKey, payload: job.encoded(), refresh: refresh))
        }
        return outputs
    }

    /// How long a job of a source this worker has no key for (or a broken configuration of) waits before it
    /// tries again: the operator has to act, and other workers may have the key.
    static let misconfiguredSourceWait: Duration = .seconds(60)

    /// Where an operator sets a refused account's new session or access token.
    private func signInHint(_ label: String?) -> String {
        guard let label, self.adapters.configuration.tmdbAccessTokens[label] != nil else {
            return " (set a new session in TMDB_SESSION_ID or TMDB_SESSIONS)"
        }
        return " (set a new access token in TMDB_ACCESS_TOKEN or TMDB_ACCESS_TOKENS)"
    }

    /// The name of a signed-in TMDB account's limit in ``SourceLimits``: `tmdb.account.<label>`.
    public static func accountLimit(_ account: String) -> String { "tmdb.account.\(account)" }

    /// The stage's reading of an adapter's error.
    public static func stageError(_ error: SourceError, source: Source) -> StageError {
        let code = error.code
        if code.isSameKind(as: .missingKey(source)) || code.isSameKind(as: .unauthorized(source)) {
            let hint = source.keyVariable.map { " (set \($0), or \($0)_FILE)" } ?? ""
            return .held(error.reason + hint, wait: error.retryAfter ?? Self.misconfiguredSourceWait)
        }
        if code == .invalidConfiguration || code == .sessionRefused {
            return .held(error.reason, wait: Self.misconfiguredSourceWait)
        }
        return error.isRetriable ? .transient(error.reason, minimumWait: error.retryAfter) : .permanent(error.reason)
    }
}
