public import Hummingbird
public import Logging
import MarqueeCore
import MarqueeHTTP
import MarqueeImageStore
import MarqueeJSON
import MarqueeKafka
public import MarqueeObservability
import MarqueeOperations
import MarqueeStore
import NIOCore
public import ServiceLifecycle
import Synchronization
import UnixSignals

import class Foundation.FileManager

/// The web dashboard of `marquee dashboard`: lag, workers, dead letters and the store on one page that
/// refreshes itself, plus a page per dead letter, the JSON behind every panel and the stored thumbnails.
///
/// Lag and worker samples are taken by ``sample()`` (every ``DashboardConfiguration/sampleInterval`` by
/// ``sampler``) and kept in memory for an hour; the store is asked on each request. Everything is read-only.
///
/// | route | answer |
/// |---|---|
/// | `/` | the page |
/// | `/dlq/<stage>/<partition>/<offset>` | one dead letter: its facts, headers and payload |
/// | `/api/lag` | ``LagReport``'s JSON (docs/lag.md) plus `history` per stage |
/// | `/api/workers`, `/api/dlq`, `/api/dlq/<stage>/<partition>/<offset>`, `/api/store` | the other panels |
/// | `/images/<store key>` | a stored image variant (`ab/cd/<sha256>/<width>.<format>`) |
/// | `/healthz` | 200 while it runs |
///
/// Every route but `/healthz` answers only the `Host` names of ``allowedHosts`` and the address it listens on;
/// others get 421 (``HostAllowListMiddleware``): the dead letters' payloads must not be readable by a page on
/// another site through the operator's browser (DNS rebinding).
public final class Dashboard: Sendable {
    /// What it shows and where it finds it.
    public let configuration: DashboardConfiguration
    /// The `Host` names answered: ``HostAllowList/dashboard`` and ``DashboardConfiguration/allowedHosts`` (the
    /// address it listens on is added by ``router(bindAddress:)``).
    public let allowedHosts: HostAllowList
    let monitor: DashboardMonitor
    let deadLetters: DeadLetterQueue
    let store: StoreAccess
    let imageStore: (any ImageStore)?
    let logger: Logger

    /// Connects to the brokers (lazily, as librdkafka does) and prepares the store and image store.
    ///
    /// - Throws: A ``HostAllowList/InvalidEntry`` for an allowed host that is no host name; a ``KafkaError`` for a
    ///   bad Kafka configuration; an ``ImageStoreError`` for a bad image store location; an `HTTPFetchError` when
    ///   the HTTP client of the worker probes cannot start.
    public init(configuration: DashboardConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.allowedHosts = try HostAllowList.dashboard.adding(configuration.allowedHosts)
        let admin = try KafkaAdmin(
            configuration: configuration.kafka,
            requestTimeout: configuration.requestTimeout,
            logger: logger
        )
        let reader = try KafkaReader(configuration: configuration.kafka, logger: logger)
        var http = HTTPFetcherConfiguration()
        http.connectTimeout = configuration.requestTimeout
        http.totalTimeout = configuration.requestTimeout
        http.allowsPrivateAddresses = true
        http.prefersHTTP2 = false
        var quiet = logger
        quiet.logLevel = .critical
        let fetcher = try HTTPFetcher(configuration: http, logger: quiet)
        self.monitor = DashboardMonitor(
            configuration: configuration,
            admin: admin,
            reader: reader,
            fetcher: fetcher,
            logger: logger
        )
        // The letter pages read through the monitor's queue: one reader group, one timeout.
        self.deadLetters = self.monitor.deadLetterQueue
        self.store = StoreAccess(location: configuration.store, timeout: configuration.requestTimeout, logger: logger)
        self.imageStore = try configuration.imageStore.map {
            try ImageStores.make(location: $0, environment: configuration.environment, fetcher: nil, logger: logger)
        }
    }

    /// Takes one sample of every stage's lag, every worker and the dead-letter topics.
    ///
    /// ``sampler`` calls it every ``DashboardConfiguration/sampleInterval``; tests call it to have known
    /// samples. Never throws: what could not be read is shown as such.
    public func sample() async { await self.monitor.round() }

    /// The service that samples every ``DashboardConfiguration/sampleInterval`` until graceful shutdown.
    public var sampler: some Service { DashboardSampler(dashboard: self) }

    /// Closes the store's connections.
    public func close() async { await self.store.close() }

    /// The routes (for an `Application`, or HummingbirdTesting).
    ///
    /// - Parameter bindAddress: The address the server listens on, answered as a `Host` name too.
    public func router(bindAddress: String? = nil) -> Router<BasicRequestContext> {
        let router = Router()
        // Before the routes: a middleware applies to the routes added after it (and to 404s). `/healthz` says
        // only that the dashboard runs, so a probe may ask it under any name (a container's IP address).
        router.add(
            middleware: HostAllowListMiddleware(
                allowList: bindAddress.map { self.allowedHosts.adding(bindAddress: $0) } ?? self.allowedHosts,
                exemptPaths: ["/healthz"],
                hint: "add the name with marquee dashboard --allowed-host (MARQUEE_DASHBOARD_ALLOWED_HOSTS)",
                logger: self.logger
            )
        )
        router.get("/") { request, _ in await self.overviewPage(request) }
        router.get("dlq/:stage/:partition/:offset") { _, context in
            await self.deadLetterPage(try Self.letterID(context))
        }
        router.get("api/lag") { _, _ in Self.json(await self.lagJSON()) }
        router.get("api/workers") { _, _ in Self.json(await self.workersJSON()) }
        router.get("api/dlq") { _, _ in Self.json(await self.deadLettersJSON()) }
        router.get("api/dlq/:stage/:partition/:offset") { _, context in
            let id = try Self.letterID(context)
            guard let json = try await self.deadLetterJSON(id) else {
                throw HTTPError(.notFound, message: "no dead letter \(id)")
            }
            return Self.json(json)
        }
        router.get("api/store") { _, _ in
            let (status, json) = await self.storeJSON()
            return Self.json(json, status: status)
        }
        router.get("images/:a/:b/:sha256/:file") { _, context in try await self.image(context) }
        router.get("assets/dashboard.css") { _, _ in
            Self.text(DashboardTemplates.stylesheet, contentType: "text/css; charset=utf-8")
        }
        router.get("assets/dashboard.js") { _, _ in
            Self.text(DashboardTemplates.script, contentType: "text/javascript; charset=utf-8")
        }
        router.get("healthz") { _, _ in "ok\n" }
        return router
    }

    /// The HTTP server of these routes on `host:port` (port 0: any free port, reported to `onStarted`).
    public func application(
        host: String,
        port: Int,
        onStarted: (@Sendable (Int) -> Void)? = nil
    ) -> some Service {
        Application(
            router: self.router(bindAddress: host),
            configuration: .init(address: .hostname(host, port: port), serverName: "marquee-dashboard"),
            onServerRunning: { channel in onStarted?(channel.localAddress?.port ?? 0) },
            logger: self.logger
        )
    }

    /// Samples and serves on `host:port` until SIGTERM or SIGINT, then shuts both down gracefully.
    ///
    /// - Parameters:
    ///   - host: The address to listen on, e.g. `127.0.0.1` (`0.0.0.0` for every interface).
    ///   - port: The port; 0 takes any free one.
    ///   - onStarted: Called with the port once the server listens.
    /// - Throws: The server's error when it cannot listen (the port taken, a bad host).
    public func serve(host: String, port: Int, onStarted: (@Sendable (Int) -> Void)? = nil) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    // The sampler returns on graceful shutdown: that must not cancel the server's requests.
                    .init(service: self.sampler, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: self.application(host: host, port: port, onStarted: onStarted)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: self.logger
            )
        )
        try await group.run()
    }

    // MARK: - Responses

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var bytes = value.encoded()
        bytes.append(UInt8(ascii: "\n"))
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    static func text(_ text: String, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: contentType, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }

    static func letterID(_ context: BasicRequestContext) throws -> DeadLetterID {
        guard let stage = context.parameters.get("stage"),
            let partition = context.parameters.get("partition", as: Int32.self), partition >= 0,
            let offset = context.parameters.get("offset", as: Int64.self), offset >= 0
        else { throw HTTPError(.badRequest, message: "a dead letter is /dlq/<stage>/<partition>/<offset>") }
        return DeadLetterID(stage: stage, partition: partition, offset: offset)
    }

    /// A stored variant's bytes. Only variant keys are served (`<width>.<format>`), never originals or manifests.
    func image(_ context: BasicRequestContext) async throws -> Response {
        guard let store = self.imageStore else { throw HTTPError(.notFound, message: "no image store configured") }
        let parts = ["a", "b", "sha256", "file"].compactMap { context.parameters.get($0) }
        guard parts.count == 4, let key = ImageKey(rawValue: parts.joined(separator: "/")),
            parts[3] != "original", parts[3] != "manifest.json"
        else { throw HTTPError(.notFound, message: "not an image variant") }
        let format = parts[3].split(separator: ".").last.map(String.init) ?? ""
        let bytes: [UInt8]?
        do {
            bytes = try await store.get(key)
        } catch {
            throw HTTPError(.serviceUnavailable, message: "the image store cannot be read: \(error.reason)")
        }
        guard let bytes else { throw HTTPError(.notFound, message: "no image \(key)") }
        let contentType =
            switch format {
            case "webp": "image/webp"
            case "jpeg", "jpg": "image/jpeg"
            case "png": "image/png"
            case "gif": "image/gif"
            default: "application/octet-stream"
            }
        return Response(
            status: .ok,
            // Keys name content: a key's bytes never change.
            headers: [.contentType: contentType, .cacheControl: "public, max-age=31536000, immutable"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}

/// The catalogue store, opened on first use. An SQLite file that does not exist yet is not created: the
/// dashboard only reads, and says that nothing was indexed yet.
final class StoreAccess: Sendable {
    let location: StoreLocation?
    private let timeout: Duration
    private let logger: Logger
    private let opened = Mutex<Store?>(nil)

    init(location: StoreLocation?, timeout: Duration, logger: Logger) {
        self.location = location
        self.timeout = timeout
        self.logger = logger
    }

    /// The store, or why there is none to read.
    func store() throws(DashboardStoreUnavailable) -> Store {
        guard let location = self.location else { throw DashboardStoreUnavailable("no store configured") }
        if let store = self.opened.withLock({ $0 }) { return store }
        if case .sqlite(let path) = location.engine, !FileManager.default.fileExists(atPath: path) {
            throw DashboardStoreUnavailable("\(location) does not exist yet: nothing was indexed")
        }
        let store: Store
        do {
            store = try Store.open(location, maximumConnections: 2, timeout: self.timeout, logger: self.logger)
        } catch {
            throw DashboardStoreUnavailable("\(location) cannot be opened: \(error)")
        }
        return self.opened.withLock { current in
            if let current { return current }
            current = store
            return store
        }
    }

    func close() async {
        if let store = self.opened.withLock({ $0 }) { await store.close() }
    }
}

/// Why the store panel is empty.
struct DashboardStoreUnavailable: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Samples every interval until graceful shutdown.
struct DashboardSampler: Service {
    let dashboard: Dashboard

    func run() async throws {
        let interval = self.dashboard.configuration.sampleInterval
        let dashboard = self.dashboard
        await cancelWhenGracefulShutdown {
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                await dashboard.sample()
                next = max(next + interval, clock.now)
                do {
                    try await clock.sleep(until: next)
                } catch {
                    return
                }
            }
        }
    }
}
