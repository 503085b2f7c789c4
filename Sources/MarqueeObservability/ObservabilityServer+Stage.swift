public import Logging
public import MarqueePipeline

extension ObservabilityServer {
    /// The listener of a stage process: `/metrics` renders `metrics` after reading the stage's status (in-flight
    /// jobs, readiness, paused partitions, consumer lag), and `/readyz` answers from the same status.
    ///
    /// - Parameters:
    ///   - stage: The stage whose status the probes and gauges report.
    ///   - metrics: The stage's metrics (``StageConfiguration/report(to:)`` wires the job counters).
    ///   - host: The address to bind. Default: `127.0.0.1`.
    ///   - port: The port; 0 picks a free one (reported to `onStarted`).
    ///   - allowedHosts: The `Host` names answered; `host` is always added. Default: ``HostAllowList/observability``.
    public init<Handler: StageHandler>(
        stage: Stage<Handler>,
        metrics: StageMetrics,
        host: String = "127.0.0.1",
        port: Int,
        allowedHosts: HostAllowList? = nil,
        logger: Logger,
        onStarted: (@Sendable (Int) -> Void)? = nil
    ) {
        self.init(
            host: host,
            port: port,
            allowedHosts: allowedHosts,
            metrics: {
                metrics.update(stage.status)
                return metrics.render()
            },
            readiness: {
                stage.status.notReadyReason.map { .notReady($0) } ?? .ready
            },
            logger: logger,
            onStarted: onStarted
        )
    }
}
