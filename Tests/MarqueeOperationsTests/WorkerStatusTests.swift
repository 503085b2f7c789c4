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
        #expect(samples[0] == PrometheusSample(name: "marquee_stage_jobs_total", labels: ["stage": "fetch", "outcome": "succeeded"], value: 12))
        #expect(samples[1].value == 3)
        #expect(samples[2] == PrometheusSample(name: "marquee_stage_in_flight", labels: [:], value: 2.5))
        #expect(samples[3].labels == ["reason": #"a "quoted", b"#, "x": "1"])
        #expect(samples[3].value == 1000)
    }
}
