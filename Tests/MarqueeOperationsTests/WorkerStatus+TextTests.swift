import Testing

@testable import MarqueeOperations

@Suite struct WorkerStatusTextTests {
    @Test func aRowPerWorkerWithDashesForFiguresNotReported() {
        let figures = WorkerStatus.Figures([
            PrometheusSample(name: "marquee_stage_in_flight", labels: [:], value: 3),
            PrometheusSample(name: "marquee_stage_consumer_lag", labels: [:], value: 12),
        ])
        let statuses = [
            WorkerStatus(stage: "fetch", address: "127.0.0.1:9101", state: .ready, reason: nil, figures: figures),
            WorkerStatus(
                stage: "images",
                address: "127.0.0.1:9102",
                state: .unreachable,
                reason: "connection refused",
                figures: nil
            ),
        ]
        let lines = WorkerStatus.table(statuses).split(separator: "\n").map(String.init)
        #expect(
            lines[0]
                == "STAGE   ADDRESS         READY        IN FLIGHT  ASSIGNED  PAUSED  SUCCEEDED  RETRIED  DLQ  LAG  REASON"
        )
        #expect(
            lines[2]
                == "images  127.0.0.1:9102  unreachable          -         -       -          -        -    -    -  connection refused"
        )
        #expect(lines[1].hasPrefix("fetch   127.0.0.1:9101  ready"))
    }
}
