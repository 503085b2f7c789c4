import Testing

@testable import MarqueeDashboard
@testable import MarqueeOperations

/// "Restarts seen": a worker's job counters falling between two samples.
@Suite struct WorkerRecordTests {
    func status(_ state: WorkerStatus.State, succeeded: Int? = nil, retried: Int = 0) -> WorkerStatus {
        let figures = succeeded.map { succeeded in
            WorkerStatus.Figures(
                PrometheusSample.parse(
                    """
                    marquee_stage_jobs_total{stage="fetch",kind="tmdb.movie",outcome="succeeded"} \(succeeded)
                    marquee_stage_jobs_total{stage="fetch",kind="tmdb.movie",outcome="retried"} \(retried)
                    marquee_stage_in_flight{stage="fetch"} 3
                    """
                )
            )
        }
        return WorkerStatus(
            stage: "fetch",
            address: "127.0.0.1:9101",
            state: state,
            reason: state == .unreachable ? "connection refused" : nil,
            figures: figures
        )
    }

    @Test func countersThatFallAreARestartAndGrowingOnesAreNot() {
        var record = WorkerRecord(status: self.status(.ready, succeeded: 10), now: 1_000)
        #expect(record.restarts == 0)
        #expect(record.lastAnswered == 1_000)
        record.observe(self.status(.ready, succeeded: 25, retried: 2), at: 2_000)
        #expect(record.restarts == 0)
        // The process went away, then a new one answers with counters from zero.
        record.observe(self.status(.unreachable), at: 3_000)
        #expect(record.restarts == 0)
        #expect(record.lastAnswered == 2_000, "the last time it answered")
        record.observe(self.status(.notReady, succeeded: 1), at: 4_000)
        #expect(record.restarts == 1)
        #expect(record.status.state == .notReady)
        record.observe(self.status(.ready, succeeded: 1), at: 5_000)
        record.observe(self.status(.ready, succeeded: 0), at: 6_000)
        #expect(record.restarts == 2)
        #expect(record.firstSeen == 1_000)
    }
}
