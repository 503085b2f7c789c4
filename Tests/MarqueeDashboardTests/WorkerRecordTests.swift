import MarqueeKafka
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
        let target = WorkerTarget(stage: "fetch", address: "127.0.0.1:9101", isConfigured: true)
        var record = WorkerRecord(target: target, status: self.status(.ready, succeeded: 10), now: 1_000)
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
        #expect(record.status?.state == .notReady)
        record.observe(self.status(.ready, succeeded: 1), at: 5_000)
        record.observe(self.status(.ready, succeeded: 0), at: 6_000)
        #expect(record.restarts == 2)
        #expect(record.firstSeen == 1_000)
    }

    @Test func aMemberWithoutAnAddressIsNeverAsked() {
        let member = KafkaConsumerGroupMember(
            memberID: "m1",
            clientID: "marquee-fetch",
            host: "/10.0.0.5",
            assignment: []
        )
        var record = WorkerRecord(
            target: WorkerTarget(stage: "fetch", address: nil, members: [member]),
            status: nil,
            now: 1_000
        )
        record.observe(nil, at: 2_000)
        #expect(record.lastAnswered == nil)
        #expect(record.restarts == 0)
        #expect(Dashboard.state(of: record) == "no-address")
        #expect(Dashboard.reason(of: record) == "no address announced")
        #expect(Dashboard.memberText(record.target) == "marquee-fetch (/10.0.0.5)")

        let unseen = KafkaConsumerGroupMember(
            memberID: "m2",
            clientID: "marquee-fetch_0.0.0.0_9101",
            host: "",
            assignment: []
        )
        let silent = WorkerRecord(
            target: WorkerTarget(stage: "fetch", address: nil, members: [unseen]),
            status: nil,
            now: 1_000
        )
        #expect(
            Dashboard.reason(of: silent)?.hasPrefix(
                "no address announced: 0.0.0.0:9101 asks for the host the broker sees"
            ) == true
        )
    }
}
