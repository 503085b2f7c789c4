import MarqueeOperations
import Testing

@Suite struct PrometheusSampleTests {
    @Test func readsNamesLabelsAndValuesAndSkipsComments() {
        let samples = PrometheusSample.parse(
            #"""
            # HELP marquee_stage_jobs_total Jobs finished, by outcome.
            # TYPE marquee_stage_jobs_total counter
            marquee_stage_jobs_total{stage="fetch",outcome="succeeded"} 12
            marquee_stage_jobs_total{stage="fetch",outcome="retried"} 3 1700000000000
            marquee_stage_in_flight 2.5
            odd{reason="a \"quoted\", b",x="1"} 1e3
            not a sample
            """#
        )
        #expect(samples.count == 4)
        #expect(
            samples[0]
                == PrometheusSample(
                    name: "marquee_stage_jobs_total",
                    labels: ["stage": "fetch", "outcome": "succeeded"],
                    value: 12
                )
        )
        #expect(samples[1].value == 3)
        #expect(samples[2] == PrometheusSample(name: "marquee_stage_in_flight", labels: [:], value: 2.5))
        #expect(samples[3].labels == ["reason": #"a "quoted", b"#, "x": "1"])
        #expect(samples[3].value == 1000)
    }
}

@Suite struct WorkerStatusReasonTests {
    @Test(arguments: [
        // Hummingbird's error body, as workers answered /readyz before their plain-text reasons.
        (
            #"{"error":{"message":"the store is down: PostgreSQL (db:5432/marquee) is unreachable"}}"#,
            "the store is down: PostgreSQL (db:5432/marquee) is unreachable"
        ),
        (#"  {"error":{"message":"quoted \"x\"\nsecond line"}} "#, #"quoted "x" second line"#),
        (#"{"message":"no partitions assigned"}"#, "no partitions assigned"),
        (#"{"error":"source tmdb paused"}"#, "source tmdb paused"),
        ("the store is down: connection refused\n", "the store is down: connection refused"),
        ("line one\r\n\tline two\u{0}", "line one line two"),
        (#"{"unrelated":1}"#, #"{"unrelated":1}"#),
        ("{not json", "{not json"),
        ("", "/readyz answered 503"),
        ("  \n", "/readyz answered 503"),
        (#"{"error":{"message":""}}"#, "/readyz answered 503"),
    ])
    func aReasonIsOneReadableLine(body: String, reason: String) {
        #expect(WorkerStatus.readableReason(Array(body.utf8), status: 503) == reason)
    }

    @Test func aLongReasonIsCut() {
        let reason = WorkerStatus.readableReason(Array(String(repeating: "x", count: 2000).utf8), status: 503)
        #expect(reason.count == 500)
        #expect(reason.hasSuffix("…"))
    }
}
