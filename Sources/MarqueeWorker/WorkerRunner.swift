public import Logging
import MarqueeKafka
public import MarqueeObservability
public import MarqueePipeline
public import ServiceLifecycle
import UnixSignals

/// Runs a worker process: one stage, its metrics and probes listener, and any other services it needs, in one
/// `ServiceGroup` that SIGTERM and SIGINT shut down gracefully (docs/design.md, "Guarantees"). `marquee-producer`
/// runs its scheduler the same way (``run(main:server:services:exitDeadline:logger:whenStopped:)``).
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
    ///   - metricsAddress: Where `/metrics`, `/healthz` and `/readyz` listen, the `Host` names they answer, and
    ///     the address announced in the Kafka client id (``MetricsAddress/announced``).
    ///   - services: Services the handler needs running alongside (started before the stage, stopped after).
    ///   - metrics: The stage's metrics, when the handler reports to them too; `nil` makes new ones.
    ///   - onStarted: Called with the listener's port once it listens (0 picks a free port).
    ///   - whenStopped: Runs after every service stopped (closing the store), within the exit deadline.
    ///
    /// Once shutdown begins, the process has ``exitDeadline(for:)`` to finish it: past that, it logs and exits
    /// with status 70 (``ShutdownWatchdog``).
    public static func run<Handler: StageHandler>(
        configuration: StageConfiguration,
        handler: Handler,
        metricsAddress: MetricsAddress,
        services: [any Service] = [],
        metrics: StageMetrics? = nil,
        logger: Logger,
        onStarted: (@Sendable (Int) -> Void)? = nil,
        whenStopped: @Sendable () async -> Void = {}
    ) async throws {
        var configuration = configuration
        // The client id carries where `/metrics` is reached, so `marquee dashboard` finds every member of the group.
        let announced = metricsAddress.announced
        configuration.kafka.clientID = AnnouncedAddress.clientID(
            name: configuration.kafka.clientID,
            announcing: announced
        )
        let metrics = metrics ?? StageMetrics(stage: configuration.topics.stage)
        configuration.report(to: metrics)
        let stage = Stage(configuration: configuration, handler: handler, logger: logger)
        let stageName = configuration.topics.stage
        let server = ObservabilityServer(
            stage: stage,
            metrics: metrics,
            host: metricsAddress.host,
            port: metricsAddress.port,
            allowedHosts: metricsAddress.allowedHosts,
            logger: logger
        ) { port in
            logger.notice(
                "\(stageName) worker started",
                metadata: [
                    "marquee.metrics": "http://\(metricsAddress.host):\(port)/metrics",
                    "marquee.announced": "\(announced.map { "\($0)" } ?? "none")",
                    "marquee.allocator": "\(MemoryAllocator.current)",
                ]
            )
            onStarted?(port)
        }
        try await Self.run(
            main: stage,
            server: server,
            services: services,
            exitDeadline: Self.exitDeadline(for: configuration),
            logger: logger,
            whenStopped: whenStopped
        )
    }

    /// Runs a long-running process's `main` service with its observability listener (`server`) and the
    /// `services` it needs, in one `ServiceGroup` that SIGTERM and SIGINT shut down gracefully: the stage of a
    /// worker, the scheduler of `marquee-producer`. `main` ending ends the group.
    ///
    /// Once shutdown begins, the process has `exitDeadline` to finish it: past that, it logs and exits with status
    /// 70 (``ShutdownWatchdog``).
    ///
    /// - Parameters:
    ///   - services: Services `main` needs running alongside (started before it, stopped after).
    ///   - whenStopped: Runs after every service stopped (closing the store), within the exit deadline.
    public static func run(
        main: some Service,
        server: ObservabilityServer,
        services: [any Service] = [],
        exitDeadline: Duration,
        logger: Logger,
        whenStopped: @Sendable () async -> Void = {}
    ) async throws {
        let watchdog = ShutdownWatchdog(deadline: exitDeadline, logger: logger)
        // Services are told to shut down last to first: the watchdog is armed first, then `main` drains.
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) } + [
                    .init(service: server),
                    .init(service: main, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: watchdog, successTerminationBehavior: .ignore),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            watchdog.arm()  // a `main` that failed ends the group without a graceful shutdown
            await whenStopped()
            watchdog.disarm()
            throw error
        }
        watchdog.arm()
        await whenStopped()
        watchdog.disarm()
    }

    /// How long a worker may take from the start of its shutdown to its exit: the stage's shutdown timeout and
    /// cancellation grace, plus a minute for leaving the group, flushing the producer and closing the store.
    public static func exitDeadline(for configuration: StageConfiguration) -> Duration {
        configuration.shutdownTimeout + configuration.cancellationGrace + .seconds(60)
    }
}
