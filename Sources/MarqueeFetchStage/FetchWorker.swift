public import Logging
import MarqueeCore
public import MarqueeHTTP
public import MarqueeKafka
public import MarqueeLimits
public import MarqueeSources
public import ServiceLifecycle

/// What a fetch worker needs besides the stage's own settings.
public struct FetchWorkerSettings: Sendable {
    public var sources: SourceConfiguration
    public var http: HTTPFetcherConfiguration
    /// The KOFIC key's daily call budget for the whole pipeline; `nil` for none. Default: 3,000.
    public var koficDailyBudget: Int? = 3000
    /// Requests per second per source for the whole pipeline (sources missing: no rate limit). Default: none.
    public var rateLimits: [Source: Double] = [:]
    /// Where the limits are shared with the other workers: the store (`StoreCoordination`), or `nil` for this
    /// process alone. Default: `nil`.
    public var coordination: (any Coordination)? = nil
    /// The rest of the limits' settings (heartbeat, member expiry, probe interval); the limits themselves and the
    /// member's name are filled in by ``FetchWorker``.
    public var limitsTuning: (@Sendable (inout SourceLimitsConfiguration) -> Void)? = nil
    /// Told of every admission, 429, pause and budget change (for metrics). Default: `nil`.
    public var onLimitEvent: (@Sendable (SourceLimitEvent) -> Void)? = nil
    /// Conditional requests (ETag / Last-Modified). Default: on.
    public var sendsConditionalRequests = true
    /// Where validators are kept: `nil` for this process's memory; the store's shared cache
    /// (`StoreValidatorCache` in marquee-fetch) so restarts and other workers reuse them.
    public var validatorCache: (any ValidatorCache)? = nil
    /// Told of every upstream call's outcome: the source and the HTTP status, or `error` without a response
    /// (for metrics). Default: `nil`.
    public var onResponse: (@Sendable (_ source: String, _ status: String) -> Void)? = nil

    public init(sources: SourceConfiguration, http: HTTPFetcherConfiguration, koficDailyBudget: Int? = 3000) {
        self.sources = sources
        self.http = http
        self.koficDailyBudget = koficDailyBudget
    }
}

/// The fetch worker's parts: the HTTP client and the limits (services that stop after the stage, in
/// ``services``) and the handler.
public final class FetchWorker: Service, Sendable {
    public let handler: FetchHandler
    /// The sources' limits, held with the other workers.
    public let limits: SourceLimits
    private let fetcher: HTTPFetcher

    /// How long the fetch stage's producer waits to fill a batch (`linger.ms`), where the other stages keep the
    /// producer's 5 ms: a fetch job emits about nine messages over two topics, and batching them longer cut the
    /// broker's CPU per job by about a third (make bench-fetch; docs/fetch.md, "Producer batching and
    /// compression"). It adds at most 15 ms before a job's outputs are sent, against an upstream call of tens to
    /// hundreds of milliseconds. `-X linger.ms=…` still overrides it.
    public static let producerLinger: Duration = .milliseconds(20)

    /// How the fetch stage's producer compresses its batches: lz4, where the other stages send theirs as they are.
    /// The outputs are JSON, and the broker's CPU per job fell by about a quarter with the worker's unchanged
    /// (docs/fetch.md, "Producer batching and compression"). Consumers decompress without being told.
    /// `-X compression.codec=…` still overrides it.
    public static let producerCompression: KafkaProducerConfiguration.Compression = .lz4

    public init(settings: FetchWorkerSettings, logger: Logger) throws {
        self.fetcher = try HTTPFetcher(configuration: settings.http, logger: logger)
        let http = settings.http
        var limits = SourceLimitsConfiguration(
            limits: Self.sourceLimits(settings),
            stage: "fetch",
            member: SourceLimitsConfiguration.memberName(stage: "fetch"),
            host: SourceLimitsConfiguration.hostName
        )
        settings.limitsTuning?(&limits)
        self.limits = SourceLimits(
            configuration: limits,
            coordination: settings.coordination ?? LocalCoordination(),
            logger: logger,
            onEvent: settings.onLimitEvent
        )
        self.handler = FetchHandler(
            adapters: SourceAdapters(
                configuration: settings.sources,
                imageHostAllowed: { http.isImageHostAllowed($0) }
            ),
            fetcher: self.fetcher,
            validators: settings.sendsConditionalRequests ? settings.validatorCache ?? InMemoryValidatorCache() : nil,
            limits: self.limits,
            onResponse: settings.onResponse,
            logger: logger
        )
    }

    /// Each source's limits: its rate for the pipeline, KOFIC's daily budget, keyed by the source's key and
    /// upstream so workers with the same key against the same upstream share them.
    ///
    /// Each signed-in TMDB account configured is a limit of its own, without a rate (its requests go at TMDB's):
    /// a refused session or access token pauses that account's jobs for the pipeline as a refused key pauses a
    /// source, keyed by its fingerprint, so a new session or token is a new limit that starts unpaused.
    static func sourceLimits(_ settings: FetchWorkerSettings) -> [SourceLimit] {
        let sources = settings.sources
        let limits = Source.allCases.map { source in
            let (key, url): (Secret?, String) =
                switch source {
                case .tmdb: (sources.tmdbAPIKey, sources.tmdbBaseURL)
                case .kofic: (sources.koficAPIKey, sources.koficBaseURL)
                case .kakao: (sources.kakaoAPIKey, sources.kakaoBaseURL)
                case .openLibrary: (nil, sources.openLibraryBaseURL)
                }
            return SourceLimit(
                source: source.rawValue,
                displayName: source.displayName,
                key: key?.revealed,
                host: SourceLimit.hostAndPort(ofURL: url),
                rate: settings.rateLimits[source],
                dailyBudget: source == .kofic ? settings.koficDailyBudget : nil
            )
        }
        return limits
            + sources.tmdbAccountLabels.map { account in
                SourceLimit(
                    source: FetchHandler.accountLimit(account),
                    displayName: "TMDB account \(account)",
                    key: sources.tmdbAccountSecret(account)?.revealed,
                    host: SourceLimit.hostAndPort(
                        ofURL: sources.tmdbSessions[account] == nil ? sources.tmdbV4URL ?? "" : sources.tmdbBaseURL
                    ),
                    rate: nil
                )
            }
    }

    /// The services the handler needs, in the order a `ServiceGroup` starts them: the HTTP client, then the
    /// limits (``run()``), so the limits stop first and the client after them.
    public var services: [any Service] { [self.fetcher, self] }

    /// Runs the limits' heartbeat and schedules until graceful shutdown (after the stage stopped); then leaves the
    /// limits' members.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.limits.run() }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await self.limits.close()
    }
}
