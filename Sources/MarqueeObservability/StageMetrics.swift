internal import MarqueeCore
internal import MarqueeKafka
public import MarqueePipeline
public import Prometheus
import Synchronization

/// The Prometheus metrics of one stage process.
///
/// | metric | labels |
/// |---|---|
/// | `marquee_stage_jobs_total` | `stage`, `kind`, `outcome` (`succeeded`, `retried`, `held`, `dead_lettered`) |
/// | `marquee_stage_retries_total` | `stage`, `kind`, `tier` |
/// | `marquee_stage_dlq_total` | `stage`, `kind`, `error_kind` |
/// | `marquee_stage_outputs_total` | `stage` |
/// | `marquee_stage_job_duration_seconds` (histogram) | `stage` |
/// | `marquee_stage_in_flight` | `stage` |
/// | `marquee_stage_uncommitted` | `stage` |
/// | `marquee_stage_ready` (1 or 0) | `stage` |
/// | `marquee_stage_assigned_partitions`, `marquee_stage_paused_partitions` | `stage` |
/// | `marquee_stage_consumer_lag` (messages, from librdkafka's statistics) | `stage`, `topic` |
/// | `marquee_fetch_http_responses_total` (fetch worker) | `source`, `status` (the HTTP status, or `error` without a response) |
/// | `marquee_images_bytes_total` (image worker) | `direction` (`in`: downloaded, `out`: variants written) |
/// | `marquee_source_requests_total` (fetch worker) | `source`: requests started under the pipeline's limits |
/// | `marquee_source_throttled_total` (fetch worker) | `source`: 429 answers |
/// | `marquee_source_limit_wait_seconds_total` (fetch worker) | `source`: time requests waited for their slot |
/// | `marquee_source_paused` (fetch worker, 1 or 0) | `source`: paused for the pipeline (refused key, outage) |
/// | `marquee_source_budget_remaining` (fetch worker) | `source`: calls left today in its daily budget |
///
/// `kind` is the payload's kind (a bounded set: ``PayloadKind/known`` plus `unknown`).
public final class StageMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let stage: String
    private let outputs: Counter
    private let duration: DurationHistogram
    private let inFlight: Gauge
    private let uncommitted: Gauge
    private let ready: Gauge
    private let assigned: Gauge
    private let paused: Gauge
    private let downSeconds: Gauge
    private let credentialsRefused: Gauge
    /// The counters made so far, by name and label values: the registry builds the metric's name and looks it up
    /// under its lock on every `makeCounter`, which cost the fetch worker about 3 % of its CPU, a few calls a job.
    private let counters = Mutex<[String: Counter]>([:])

    private enum Name {
        static func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "stage",
                metricName: name,
                unitName: unit,
                helpText: help
            )
        }
        static var jobs: MetricNameDescriptor { descriptor("jobs", "total", "Jobs finished, by outcome.") }
        static var retries: MetricNameDescriptor {
            descriptor("retries", "total", "Jobs moved to a retry tier, by tier.")
        }
        static var dlq: MetricNameDescriptor {
            descriptor("dlq", "total", "Jobs parked in the dead-letter topic, by error kind.")
        }
        static var outputs: MetricNameDescriptor {
            descriptor("outputs", "total", "Messages produced by succeeded jobs.")
        }
        static var duration: MetricNameDescriptor {
            descriptor("job_duration", "seconds", "Time from a job's handler start to its durable outcome.")
        }
        static var inFlight: MetricNameDescriptor { descriptor("in_flight", "", "Jobs running now.") }
        static var uncommitted: MetricNameDescriptor {
            descriptor(
                "uncommitted",
                "",
                "Jobs taken whose offsets cannot be committed yet (running, or finished behind one still running): a rebalance or crash runs them again."
            )
        }
        static var ready: MetricNameDescriptor {
            descriptor("ready", "", "1 when the stage takes jobs, 0 while a dependency is down.")
        }
        static var downSeconds: MetricNameDescriptor {
            descriptor(
                "dependency_down",
                "seconds",
                "How long a dependency every job needs (store, image store, broker) has been down, 0 while none is."
            )
        }
        static var credentialsRefused: MetricNameDescriptor {
            descriptor(
                "credentials_refused",
                "",
                "1 while the dependency that is down refuses this worker's credentials (a login, a key), else 0."
            )
        }
        static var assigned: MetricNameDescriptor {
            descriptor("assigned_partitions", "", "Partitions assigned to this process.")
        }
        static var paused: MetricNameDescriptor {
            descriptor(
                "paused_partitions",
                "",
                "Assigned partitions paused: retries waiting for their time, or all while a dependency is down."
            )
        }
        static var httpResponses: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "fetch",
                metricName: "http_responses",
                unitName: "total",
                helpText: "Upstream responses, by source and HTTP status (error: no response)."
            )
        }
        static var imageDownloads: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "images",
                metricName: "downloads",
                unitName: "total",
                helpText: "Image downloads by result: full (no validators sent), not_modified (a 304), changed."
            )
        }
        static var imageBytes: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "images",
                metricName: "bytes",
                unitName: "total",
                helpText: "Image bytes downloaded (in) and variant bytes written (out)."
            )
        }
        static var sourceRequests: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "source",
                metricName: "requests",
                unitName: "total",
                helpText: "Requests started under the pipeline's limits, by source."
            )
        }
        static var sourceThrottled: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "source",
                metricName: "throttled",
                unitName: "total",
                helpText: "429 answers, by source."
            )
        }
        static var sourceWait: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "source",
                metricName: "limit_wait_seconds",
                unitName: "total",
                helpText: "Time requests waited for their slot in the pipeline's schedule, by source."
            )
        }
        static var sourcePaused: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "source",
                metricName: "paused",
                unitName: "",
                helpText: "1 while the source is paused for the pipeline (refused key, outage)."
            )
        }
        static var sourceBudget: MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "source",
                metricName: "budget_remaining",
                unitName: "",
                helpText: "Calls left today in the source's daily budget."
            )
        }
        static var lag: MetricNameDescriptor {
            descriptor(
                "consumer_lag",
                "",
                "Messages not yet consumed on the assigned partitions, per topic (librdkafka statistics)."
            )
        }
    }

    public init(stage: String, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.stage = stage
        let labels = [("stage", stage)]
        self.outputs = registry.makeCounter(descriptor: Name.outputs, labels: labels)
        self.duration = registry.makeDurationHistogram(
            descriptor: Name.duration,
            labels: labels,
            buckets: [
                .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
                .seconds(30),
            ]
        )
        self.inFlight = registry.makeGauge(descriptor: Name.inFlight, labels: labels)
        self.uncommitted = registry.makeGauge(descriptor: Name.uncommitted, labels: labels)
        self.ready = registry.makeGauge(descriptor: Name.ready, labels: labels)
        self.assigned = registry.makeGauge(descriptor: Name.assigned, labels: labels)
        self.paused = registry.makeGauge(descriptor: Name.paused, labels: labels)
        self.downSeconds = registry.makeGauge(descriptor: Name.downSeconds, labels: labels)
        self.credentialsRefused = registry.makeGauge(descriptor: Name.credentialsRefused, labels: labels)
    }

    /// The counter `id` (its ``Name``) with `labels`, made once.
    private func counter(
        _ id: String,
        _ descriptor: @autoclosure () -> MetricNameDescriptor,
        _ labels: [(String, String)]
    ) -> Counter {
        var key = id
        for (_, value) in labels {
            key.append("\u{1F}")
            key.append(value)
        }
        if let counter = self.counters.withLock({ $0[key] }) { return counter }
        let counter = self.registry.makeCounter(descriptor: descriptor(), labels: labels)
        self.counters.withLock { $0[key] = counter }
        return counter
    }

    /// Records one finished job (wire it to ``StageConfiguration/onJobFinished``).
    public func record(_ report: StageJobReport) {
        let labels = [("stage", self.stage), ("kind", report.kind)]
        switch report.outcome {
        case .succeeded(let outputs):
            self.counter("jobs", Name.jobs, labels + [("outcome", "succeeded")]).increment()
            self.outputs.increment(by: Int64(outputs))
        case .retried(let tier):
            self.counter("jobs", Name.jobs, labels + [("outcome", "retried")]).increment()
            self.counter("retries", Name.retries, labels + [("tier", String(tier))]).increment()
        case .held:
            self.counter("jobs", Name.jobs, labels + [("outcome", "held")]).increment()
        case .deadLettered(let kind):
            self.counter("jobs", Name.jobs, labels + [("outcome", "dead_lettered")])
                .increment()
            self.counter("dlq", Name.dlq, labels + [("error_kind", kind.rawValue)])
                .increment()
        }
        if report.duration > .zero { self.duration.record(report.duration) }
    }

    /// Counts one upstream response of the fetch worker (`status`: the HTTP status, or `error` without one).
    public func recordHTTPResponse(source: String, status: String) {
        self.counter("httpResponses", Name.httpResponses, [("source", source), ("status", status)])
            .increment()
    }

    /// Counts a request the fetch worker started under the pipeline's limits, after waiting `waited` for its slot.
    public func recordSourceRequest(source: String, waited: Duration) {
        self.counter("sourceRequests", Name.sourceRequests, [("source", source)]).increment()
        let (seconds, attoseconds) = waited.components
        self.counter("sourceWait", Name.sourceWait, [("source", source)])
            .increment(by: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Counts a 429 answer of `source`.
    public func recordSourceThrottled(source: String) {
        self.counter("sourceThrottled", Name.sourceThrottled, [("source", source)]).increment()
    }

    /// Whether `source` is paused for the pipeline.
    public func setSourcePaused(source: String, _ paused: Bool) {
        self.registry.makeGauge(descriptor: Name.sourcePaused, labels: [("source", source)]).set(Int64(paused ? 1 : 0))
    }

    /// The calls left today in `source`'s daily budget.
    public func setSourceBudgetRemaining(source: String, _ remaining: Int) {
        self.registry.makeGauge(descriptor: Name.sourceBudget, labels: [("source", source)]).set(Int64(remaining))
    }

    /// Counts image bytes of the image worker: `in` downloaded, `out` written as variants.
    public func recordImageBytes(direction: String, count: Int) {
        self.counter("imageBytes", Name.imageBytes, [("direction", direction)]).increment(
            by: Int64(count)
        )
    }

    /// Counts an image download of the image worker by its result: `full`, `not_modified` or `changed`.
    public func recordImageDownload(result: String) {
        self.counter("imageDownloads", Name.imageDownloads, [("result", result)]).increment()
    }

    /// Sets the gauges that are read at scrape time from the stage's status.
    public func update(_ status: StageStatus) {
        let now = Int64(JobID.nowMilliseconds())
        self.downSeconds.set(status.downSince.map { max(0, now - $0) / 1000 } ?? 0)
        self.credentialsRefused.set(Int64(status.downDependency != nil && status.credentialsRefused ? 1 : 0))
        self.inFlight.set(Int64(status.inFlight))
        self.uncommitted.set(Int64(status.uncommitted))
        self.ready.set(Int64(status.notReadyReason == nil ? 1 : 0))
        self.assigned.set(Int64(status.assignedPartitions))
        self.paused.set(Int64(status.pausedPartitions))
        if let statistics = status.consumerStatistics {
            for (topic, lag) in ConsumerLag.perTopic(statistics: statistics) {
                self.registry.makeGauge(descriptor: Name.lag, labels: [("stage", self.stage), ("topic", topic)]).set(
                    lag
                )
            }
        }
    }

    /// The Prometheus text exposition.
    public func render() -> String { self.registry.emitToString() }
}

extension StageConfiguration {
    /// Reports every finished job to `metrics` (keeping any observer already set).
    public mutating func report(to metrics: StageMetrics) {
        let previous = self.onJobFinished
        self.onJobFinished = { report in
            metrics.record(report)
            previous?(report)
        }
        // The consumer lag gauge reads librdkafka's statistics.
        let consumer = self.consumer
        self.consumer = { configuration in
            consumer(&configuration)
            if configuration.kafka.statisticsInterval == nil { configuration.kafka.statisticsInterval = .seconds(5) }
        }
    }
}
