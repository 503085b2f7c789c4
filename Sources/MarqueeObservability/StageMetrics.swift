internal import MarqueeCore
public import MarqueePipeline
public import Prometheus

/// The Prometheus metrics of one stage process.
///
/// | metric | labels |
/// |---|---|
/// | `marquee_stage_jobs_total` | `stage`, `outcome` (`succeeded`, `retried`, `dead_lettered`) |
/// | `marquee_stage_retries_total` | `stage`, `tier` |
/// | `marquee_stage_dlq_total` | `stage`, `error_kind` |
/// | `marquee_stage_outputs_total` | `stage` |
/// | `marquee_stage_job_duration_seconds` (histogram) | `stage` |
/// | `marquee_stage_in_flight` | `stage` |
/// | `marquee_stage_ready` (1 or 0) | `stage` |
public final class StageMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let stage: String
    private let succeeded: Counter
    private let outputs: Counter
    private let duration: DurationHistogram
    private let inFlight: Gauge
    private let ready: Gauge

    private enum Name {
        static func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "marquee", subsystem: "stage", metricName: name, unitName: unit, helpText: help)
        }
        static var jobs: MetricNameDescriptor { descriptor("jobs", "total", "Jobs finished, by outcome.") }
        static var retries: MetricNameDescriptor { descriptor("retries", "total", "Jobs moved to a retry tier, by tier.") }
        static var dlq: MetricNameDescriptor { descriptor("dlq", "total", "Jobs parked in the dead-letter topic, by error kind.") }
        static var outputs: MetricNameDescriptor { descriptor("outputs", "total", "Messages produced by succeeded jobs.") }
        static var duration: MetricNameDescriptor { descriptor("job_duration", "seconds", "Time from a job's handler start to its durable outcome.") }
        static var inFlight: MetricNameDescriptor { descriptor("in_flight", "", "Jobs running now.") }
        static var ready: MetricNameDescriptor { descriptor("ready", "", "1 when the stage takes jobs, 0 while a dependency is down.") }
    }

    public init(stage: String, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.stage = stage
        let labels = [("stage", stage)]
        self.succeeded = registry.makeCounter(descriptor: Name.jobs, labels: labels + [("outcome", "succeeded")])
        self.outputs = registry.makeCounter(descriptor: Name.outputs, labels: labels)
        self.duration = registry.makeDurationHistogram(
            descriptor: Name.duration,
            labels: labels,
            buckets: [.milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5), .seconds(30)]
        )
        self.inFlight = registry.makeGauge(descriptor: Name.inFlight, labels: labels)
        self.ready = registry.makeGauge(descriptor: Name.ready, labels: labels)
    }

    /// Records one finished job (wire it to ``StageConfiguration/onJobFinished``).
    public func record(_ outcome: StageOutcome, duration: Duration) {
        let labels = [("stage", self.stage)]
        switch outcome {
        case .succeeded(let outputs):
            self.succeeded.increment()
            self.outputs.increment(by: Int64(outputs))
        case .retried(let tier):
            self.registry.makeCounter(descriptor: Name.jobs, labels: labels + [("outcome", "retried")]).increment()
            self.registry.makeCounter(descriptor: Name.retries, labels: labels + [("tier", String(tier))]).increment()
        case .deadLettered(let kind):
            self.registry.makeCounter(descriptor: Name.jobs, labels: labels + [("outcome", "dead_lettered")]).increment()
            self.registry.makeCounter(descriptor: Name.dlq, labels: labels + [("error_kind", kind.rawValue)]).increment()
        }
        if duration > .zero { self.duration.record(duration) }
    }

    /// Sets the gauges that are read at scrape time.
    public func update(inFlight: Int, isReady: Bool) {
        self.inFlight.set(Int64(inFlight))
        self.ready.set(Int64(isReady ? 1 : 0))
    }

    /// The Prometheus text exposition.
    public func render() -> String { self.registry.emitToString() }
}

extension StageConfiguration {
    /// Reports every finished job to `metrics` (keeping any observer already set).
    public mutating func report(to metrics: StageMetrics) {
        let previous = self.onJobFinished
        self.onJobFinished = { outcome, duration in
            metrics.record(outcome, duration: duration)
            previous?(outcome, duration)
        }
    }
}
