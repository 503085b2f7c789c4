public import Prometheus

/// The Prometheus metrics of a `marquee-producer` process.
///
/// | metric | labels |
/// |---|---|
/// | `marquee_producer_windows_total` | `schedule`, `outcome` (`fired`, `resent`, `skipped`, `lost`) |
/// | `marquee_producer_jobs_total` | `schedule` |
/// | `marquee_producer_last_fire_timestamp_seconds` | `schedule` |
/// | `marquee_producer_next_fire_timestamp_seconds` | `schedule` |
/// | `marquee_producer_catch_up_windows` | `schedule` |
/// | `marquee_producer_backfill_windows` | `schedule` |
/// | `marquee_producer_leader` (1 or 0) | — |
/// | `marquee_producer_ready` (1 or 0) | — |
public final class ProducerMetrics: Sendable {
    /// Where the metrics live (rendered by ``render()``).
    public let registry: PrometheusCollectorRegistry
    private let leader: Gauge
    private let ready: Gauge

    /// What happened to a window, as the `outcome` label says it.
    public enum Outcome: String, Sendable {
        /// Its jobs were sent and confirmed.
        case fired
        /// A stale claim was taken over and its jobs sent again, with the same ids.
        case resent
        /// Left out by the schedule's catch-up policy (or its jobs could not be built).
        case skipped
        /// Another replica's claim came first; it sends the jobs.
        case lost
    }

    private enum Name {
        static func descriptor(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(
                namespace: "marquee",
                subsystem: "producer",
                metricName: name,
                unitName: unit,
                helpText: help
            )
        }
        static var windows: MetricNameDescriptor {
            descriptor("windows", "total", "Windows handled by this process, by outcome.")
        }
        static var jobs: MetricNameDescriptor {
            descriptor("jobs", "total", "Fetch jobs enqueued by this process (acknowledged by the broker).")
        }
        static var lastFire: MetricNameDescriptor {
            descriptor(
                "last_fire_timestamp",
                "seconds",
                "Start of the latest window this process confirmed, epoch seconds."
            )
        }
        static var nextFire: MetricNameDescriptor {
            descriptor(
                "next_fire_timestamp",
                "seconds",
                "Start of the schedule's next window, epoch seconds (the leader's view)."
            )
        }
        static var catchUp: MetricNameDescriptor {
            descriptor(
                "catch_up_windows",
                "",
                "Missed windows the leader sends, oldest first, found when it last read the window state."
            )
        }
        static var backfill: MetricNameDescriptor {
            descriptor(
                "backfill_windows",
                "",
                "Missed windows older than the schedule's catch_up limit, which it will not send: they need a backfill "
                    + "(found when the leader last read the window state; counted up to 10,000 beyond the limit)."
            )
        }
        static var leader: MetricNameDescriptor {
            descriptor("leader", "", "1 while this process is the leader that fires windows.")
        }
        static var ready: MetricNameDescriptor { descriptor("ready", "", "1 when /readyz says ready.") }
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.leader = registry.makeGauge(descriptor: Name.leader)
        self.ready = registry.makeGauge(descriptor: Name.ready)
    }

    /// Counts a window's outcome, and its jobs when they were sent.
    public func record(schedule: String, window: Int64, outcome: Outcome, jobs: Int) {
        self.registry.makeCounter(
            descriptor: Name.windows,
            labels: [("schedule", schedule), ("outcome", outcome.rawValue)]
        ).increment()
        let sent = self.registry.makeCounter(descriptor: Name.jobs, labels: [("schedule", schedule)])
        if outcome == .fired || outcome == .resent {
            sent.increment(by: Int64(jobs))
            self.registry.makeGauge(descriptor: Name.lastFire, labels: [("schedule", schedule)]).set(
                Double(window) / 1000
            )
        }
    }

    /// Sets a schedule's next window.
    public func next(schedule: String, window: Int64) {
        self.registry.makeGauge(descriptor: Name.nextFire, labels: [("schedule", schedule)]).set(Double(window) / 1000)
    }

    /// Sets each catching-up schedule's gauges from what a new leader found missed (``WindowLedger/catchUp(schedules:now:)``):
    /// the windows it sends and those it leaves to a backfill, 0 for a `catch_up: all` or `N` schedule that missed
    /// nothing beyond its current window.
    public func catchUp(_ catchUps: [WindowLedger.CatchUp], schedules: [Schedule]) {
        let found = Dictionary(catchUps.map { ($0.schedule, $0) }, uniquingKeysWith: { first, _ in first })
        for schedule in schedules {
            guard case .all = schedule.catchUp else { continue }
            let labels = [("schedule", schedule.name)]
            let catchUp = found[schedule.name]
            self.registry.makeGauge(descriptor: Name.catchUp, labels: labels).set(Int64(catchUp?.sent.count ?? 0))
            self.registry.makeGauge(descriptor: Name.backfill, labels: labels).set(Int64(catchUp?.notSent ?? 0))
        }
    }

    /// Sets the leader and readiness gauges.
    public func update(_ status: ProducerStatus) {
        self.leader.set(Int64(status.isLeader ? 1 : 0))
        self.ready.set(Int64(status.notReadyReason == nil ? 1 : 0))
    }

    /// The Prometheus text exposition.
    public func render() -> String { self.registry.emitToString() }
}
