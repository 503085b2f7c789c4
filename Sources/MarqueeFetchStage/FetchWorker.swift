public import Logging
public import MarqueeHTTP
public import MarqueeKafka
public import MarqueeSources
public import ServiceLifecycle

import MarqueeCore

/// What a fetch worker needs besides the stage's own settings.
public struct FetchWorkerSettings: Sendable {
    public var sources: SourceConfiguration
    public var http: HTTPFetcherConfiguration
    /// The KOFIC key's daily call budget; `nil` for none. Default: 3,000.
    public var koficDailyBudget: Int? = 3000
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

    /// Parses `tmdb=40,kofic=10,…` (0 = no limit).
    public static func parseRateLimits(_ text: String) throws(SettingsError) -> [(Source, Double)] {
        try text.split(separator: ",").map { (part) throws(SettingsError) -> (Source, Double) in
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0.filter { !$0.isWhitespace }) }
            guard pair.count == 2, let source = Source(rawValue: pair[0]), let rate = Double(pair[1]), rate >= 0, rate.isFinite
            else {
                throw SettingsError(
                    "rate limit '\(part)' is not source=rate with source one of \(Source.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            return (source, rate)
        }
        .filter { $0.1 > 0 }
    }
}

/// A setting that cannot be used, with what is wrong.
public struct SettingsError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The fetch worker's parts: the HTTP client (a service that stops after the stage) and the handler.
public final class FetchWorker: Service, Sendable {
    public let handler: FetchHandler
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
        self.handler = FetchHandler(
            adapters: SourceAdapters(configuration: settings.sources, imageHostAllowed: { http.isImageHostAllowed($0) }),
            fetcher: self.fetcher,
            validators: settings.sendsConditionalRequests ? settings.validatorCache ?? InMemoryValidatorCache() : nil,
            koficBudget: settings.koficDailyBudget.map { DailyBudget(limit: $0, now: { Int64(JobID.nowMilliseconds()) }) },
            onResponse: settings.onResponse,
            logger: logger
        )
    }

    /// Keeps the HTTP client until graceful shutdown (after the stage stopped), then shuts it down.
    public func run() async throws {
        try? await gracefulShutdown()
        await self.fetcher.shutdown()
    }
}
