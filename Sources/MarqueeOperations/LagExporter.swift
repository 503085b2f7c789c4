public import Logging
import MarqueeKafka
public import ServiceLifecycle
import Synchronization

/// Samples the consumer groups from the broker every interval and keeps the latest report: what
/// `marquee lag --serve` exposes on `/metrics` (``LagExposition``). It sees a group from the broker, so its lag
/// stays visible when every member is gone — when it matters most.
///
/// A failed round (the broker away) keeps the last report and counts the failure; `/readyz` says so until a
/// round succeeds again.
public final class LagExporter: Service, Sendable {
    private struct State: Sendable {
        var sampler: LagSampler?
        var report: LagReport?
        var rounds = 0
        var failures = 0
        var lastFailure: String?
        var lastSuccess: Int64?
    }

    private let state: Mutex<State>
    private let samples: Int
    private let interval: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - sampler: Samples the groups.
    ///   - samples: Observations each status is judged over (as `marquee lag --samples`).
    ///   - interval: Time between rounds.
    public init(sampler: LagSampler, samples: Int, interval: Duration, logger: Logger) {
        precondition(samples >= 1, "a status is judged over at least one sample")
        self.state = Mutex(State(sampler: sampler))
        self.samples = samples
        self.interval = interval
        self.logger = logger
    }

    /// Samples until the service group shuts down.
    public func run() async throws {
        guard
            let taken = self.state.withLock({ state in
                defer { state.sampler = nil }
                return state.sampler
            })
        else { return }
        await cancelWhenGracefulShutdown {
            var sampler = taken
            var window = LagWindow(capacity: self.samples)
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                do {
                    window.append(try await sampler.sample())
                    let report = LagReport(stages: window.evaluate())
                    self.state.withLock { state in
                        state.report = report
                        state.rounds += 1
                        state.lastSuccess = report.time
                        state.lastFailure = nil
                    }
                } catch {
                    let reason = (error as? KafkaError)?.reason ?? "\(error)"
                    self.logger.warning("lag round failed", metadata: ["marquee.error": "\(reason)"])
                    self.state.withLock { state in
                        state.rounds += 1
                        state.failures += 1
                        state.lastFailure = reason
                    }
                }
                next = max(next + self.interval, clock.now)
                do {
                    try await clock.sleep(until: next)
                } catch {
                    return
                }
            }
        }
    }

    /// The latest report, if a round succeeded.
    public var report: LagReport? { self.state.withLock { $0.report } }

    /// The Prometheus exposition: the latest report's (``LagExposition``) and the exporter's own figures.
    public func metrics() -> String {
        let (report, rounds, failures, lastSuccess) = self.state.withLock {
            ($0.report, $0.rounds, $0.failures, $0.lastSuccess)
        }
        var out = MetricsText()
        out.family("marquee_lag_exporter_rounds", "Sampling rounds tried.")
        out.sample("marquee_lag_exporter_rounds", [], Double(rounds))
        out.family(
            "marquee_lag_exporter_failed_rounds",
            "Sampling rounds that failed (the broker did not answer or refused)."
        )
        out.sample("marquee_lag_exporter_failed_rounds", [], Double(failures))
        out.family("marquee_lag_exporter_last_success_timestamp_seconds", "When the served figures were sampled.")
        out.sample("marquee_lag_exporter_last_success_timestamp_seconds", [], Double(lastSuccess ?? 0) / 1000)
        return out.text + (report.map(LagExposition.render) ?? "")
    }

    /// Why the exporter is not ready (no round succeeded yet, or the latest failed), or `nil` when it is.
    public var notReadyReason: String? {
        self.state.withLock { state in
            if let failure = state.lastFailure { return "the latest lag round failed: \(failure)" }
            return state.report == nil ? "no lag round has completed yet" : nil
        }
    }
}
