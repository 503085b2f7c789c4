import Hummingbird
public import Logging
public import ServiceLifecycle

/// The HTTP listener every long-running Marquee process serves: `/metrics` (Prometheus text format),
/// `/healthz` (the process is alive) and `/readyz` (it can do its work: 503 with the reason as text otherwise).
///
/// It answers only the `Host` names of its ``HostAllowList`` (by default ``HostAllowList/observability`` and the
/// bind address): any IP address, as Kubernetes probes and Prometheus ask by pod IP, and names without a
/// dot, as Compose and Kubernetes services are named; a page on another site that rebinds its own name to the
/// listener's address is refused with 421.
public struct ObservabilityServer: Service {
    /// What `/readyz` answers: ready, or not with a reason an operator can read.
    public enum Readiness: Sendable, Equatable {
        case ready
        case notReady(String)
    }

    private let host: String
    private let port: Int
    private let allowedHosts: HostAllowList
    private let metrics: @Sendable () -> String
    private let readiness: @Sendable () -> Readiness
    private let logger: Logger
    private let onStarted: (@Sendable (Int) -> Void)?

    /// - Parameters:
    ///   - host: The address to bind. Default: `127.0.0.1` (loopback only).
    ///   - port: The port; 0 picks a free one (reported to `onStarted`).
    ///   - allowedHosts: The `Host` names answered; `host` is always added. Default: ``HostAllowList/observability``
    ///     (loopback, any IP address, names without a dot).
    ///   - metrics: Renders the Prometheus exposition at scrape time.
    ///   - readiness: Whether the process can do its work, asked on every `/readyz`.
    public init(
        host: String = "127.0.0.1",
        port: Int,
        allowedHosts: HostAllowList? = nil,
        metrics: @escaping @Sendable () -> String,
        readiness: @escaping @Sendable () -> Readiness,
        logger: Logger,
        onStarted: (@Sendable (Int) -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.allowedHosts = (allowedHosts ?? .observability).adding(bindAddress: host)
        self.metrics = metrics
        self.readiness = readiness
        self.logger = logger
        self.onStarted = onStarted
    }

    public func run() async throws {
        let router = Router()
        // Before the routes: a middleware applies to the routes added after it (and to 404s).
        router.add(
            middleware: HostAllowListMiddleware(
                allowList: self.allowedHosts,
                hint: "add the name to MARQUEE_METRICS_ALLOWED_HOSTS (--metrics-allowed-host), or ask by IP address",
                logger: self.logger
            )
        )
        let metrics = self.metrics
        let readiness = self.readiness
        router.get("metrics") { _, _ -> String in metrics() }
        router.get("healthz") { _, _ -> String in "ok\n" }
        router.get("readyz") { request, context -> Response in
            switch readiness() {
            case .ready: return "ready\n".response(from: request, context: context)
            case .notReady(let reason):
                // The reason as text, as `curl …/readyz` and `marquee status` show it (not an HTTPError's JSON).
                var response = (reason + "\n").response(from: request, context: context)
                response.status = .serviceUnavailable
                return response
            }
        }
        let onStarted = self.onStarted
        let application = Application(
            router: router,
            configuration: .init(address: .hostname(self.host, port: self.port), serverName: "marquee"),
            onServerRunning: { channel in onStarted?(channel.localAddress?.port ?? 0) },
            logger: self.logger
        )
        try await application.run()
    }
}
