public import Logging
public import MarqueeObservability
public import MarqueePipeline
public import ServiceLifecycle
import UnixSignals

/// Runs a worker process: one stage, its metrics and probes listener, and any other services it needs, in one
/// `ServiceGroup` that SIGTERM and SIGINT shut down gracefully (DESIGN §4).
public enum WorkerRunner {
    /// Bootstraps swift-log with JSON lines on standard error (once per process) and returns the worker's logger.
    public static func bootstrapLogging(label: String, level: String) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = Logger.Level(rawValue: level) ?? .info
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = Logger.Level(rawValue: level) ?? .info
        return logger
    }

    /// Runs `handler` as the stage `configuration` names until a signal stops it.
    ///
    /// - Parameters:
    ///   - metricsAddress: Where `/metrics`, `/healthz` and `/readyz` listen.
    ///   - services: Services the handler needs running alongside (started before the stage, stopped after).
    ///   - metrics: The stage's metrics, when the handler reports to them too; `nil` makes new ones.
    ///   - onStarted: Called with the listener's port once it listens (0 picks a free port).
    public static func run<Handler: StageHandler>(
        configuration: StageConfiguration,
        handler: Handler,
        metricsAddress: (host: String, port: Int),
        services: [any Service] = [],
        metrics: StageMetrics? = nil,
        logger: Logger,
        onStarted: (@Sendable (Int) -> Void)? = nil
    ) async throws {
        var configuration = configuration
        let metrics = metrics ?? StageMetrics(stage: configuration.topics.stage)
        configuration.report(to: metrics)
        let stage = Stage(configuration: configuration, handler: handler, logger: logger)
        let stageName = configuration.topics.stage
        let server = ObservabilityServer(
            stage: stage,
            metrics: metrics,
            host: metricsAddress.host,
            port: metricsAddress.port,
            logger: logger
        ) { port in
            logger.notice(
                "\(stageName) worker started",
                metadata: [
                    "marquee.metrics": "http://\(metricsAddress.host):\(port)/metrics",
                    "marquee.allocator": "\(MemoryAllocator.current)",
                ]
            )
            onStarted?(port)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) } + [
                    .init(service: server),
                    .init(service: stage, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
