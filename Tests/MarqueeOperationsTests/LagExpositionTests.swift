import MarqueeKafka
import MarqueeOperations
import Testing

@Suite struct LagExpositionTests {
    /// kafka-lag-exporter's names and labels per partition and per group, and the group's status one-hot.
    @Test func aReportBecomesKafkaLagExportersMetricsAndTheStatus() {
        let stalled = evaluate([
            observe(
                group: "marquee.fetch",
                at: 0,
                [sample(0, at: 0, committed: 4, end: 10, oldest: -30_000), sample(1, at: 0, committed: 5, end: 5)]
            ),
            observe(
                group: "marquee.fetch",
                at: 2000,
                [
                    sample(0, at: 2000, committed: 4, end: 10, oldest: -30_000),
                    sample(1, at: 2000, committed: 5, end: 5),
                ]
            ),
        ])
        #expect(stalled.status == .stalled)
        let text = LagExposition.render(LagReport(stages: [stalled]))
        let lines = Set(text.split(separator: "\n").map(String.init))
        let partition0 = #"group="marquee.fetch",stage="fetch",topic="marquee.fetch",partition="0""#
        #expect(lines.contains("kafka_consumergroup_group_lag{\(partition0)} 6"), "\(text)")
        #expect(
            lines.contains("kafka_consumergroup_group_lag_seconds{\(partition0)} 32"),
            "the oldest unconsumed message's age at the sample"
        )
        #expect(lines.contains("kafka_consumergroup_group_offset{\(partition0)} 4"))
        #expect(lines.contains(#"kafka_partition_latest_offset{topic="marquee.fetch",partition="0"} 10"#))
        #expect(lines.contains(#"kafka_consumergroup_group_max_lag{group="marquee.fetch",stage="fetch"} 6"#))
        #expect(lines.contains(#"kafka_consumergroup_group_max_lag_seconds{group="marquee.fetch",stage="fetch"} 32"#))
        #expect(lines.contains(#"kafka_consumergroup_group_sum_lag{group="marquee.fetch",stage="fetch"} 6"#))
        #expect(lines.contains(#"marquee_lag_due{group="marquee.fetch",stage="fetch"} 6"#))
        #expect(lines.contains(#"marquee_lag_group_status{group="marquee.fetch",stage="fetch",status="STALLED"} 1"#))
        #expect(lines.contains(#"marquee_lag_group_status{group="marquee.fetch",stage="fetch",status="OK"} 0"#))
        #expect(lines.contains("# TYPE kafka_consumergroup_group_lag gauge"))
        // Every sample line is name{labels} value.
        for line in lines where !line.hasPrefix("#") {
            #expect(line.contains("} "), "\(line)")
            #expect(Double(line.split(separator: " ").last ?? "") != nil, "\(line)")
        }
    }

    /// An idle group nobody consumes is OK: nothing is due.
    @Test func anIdleGroupWithoutMembersIsOK() {
        let idle = evaluate([observe(group: "g", members: 0, at: 0, [sample(at: 0, committed: 10, end: 10)])])
        let text = LagExposition.render(LagReport(stages: [idle]))
        #expect(text.contains(#"marquee_lag_group_status{group="g",stage="fetch",status="OK"} 1"#), "\(text)")
        #expect(text.contains(#"marquee_lag_group_status{group="g",stage="fetch",status="STOPPED"} 0"#))
        #expect(text.contains(#"marquee_lag_due_seconds{group="g",stage="fetch"} 0"#))
    }

    /// An idle group whose partitions' end offsets read below its commits (the test broker after batched produce)
    /// sums to 0, never below: an alert on the sum must not see a negative figure.
    @Test func anEndBelowTheCommitNeverMakesALagFigureNegative() {
        let idle = evaluate([
            observe(
                group: "g",
                members: 0,
                at: 0,
                [sample(0, at: 0, committed: 12, end: 10), sample(1, at: 0, committed: 5, end: 4)]
            )
        ])
        let text = LagExposition.render(LagReport(stages: [idle]))
        #expect(text.contains(#"kafka_consumergroup_group_sum_lag{group="g",stage="fetch"} 0"#), "\(text)")
        #expect(text.contains(#"kafka_consumergroup_group_max_lag{group="g",stage="fetch"} 0"#), "\(text)")
        #expect(text.contains(#"marquee_lag_group_status{group="g",stage="fetch",status="OK"} 1"#), "\(text)")
        for line in text.split(separator: "\n") where line.contains("lag") && !line.hasPrefix("#") {
            #expect((Double(line.split(separator: " ").last ?? "") ?? -1) >= 0, "\(line)")
        }
    }

    @Test func labelValuesAreEscaped() {
        let odd = evaluate([observe(group: "a\"b\\c", at: 0, [sample(at: 0, committed: 1, end: 1)])])
        #expect(LagExposition.render(LagReport(stages: [odd])).contains(#"group="a\"b\\c""#))
    }
}
