import MarqueeKafka
import MarqueeOperations
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization
import class Foundation.NSNull
import class Foundation.NSNumber

/// The JSON form of a lag report: a contract for scripts (docs/lag.md).
@Suite struct LagReportTests {
    @Test func theJSONDocumentHasEveryDocumentedFieldWithNullsForTheUnknown() throws {
        let retry = RetryBacklog(notBefores: [9_000_000_000_000, 1_000], unscanned: 0, now: 1_700_000_002_000)
        let fetch = LagEvaluation.evaluate([
            observe(
                at: 1_700_000_000_000,
                [
                    sample(0, at: 1_700_000_000_000, committed: 0, end: 10),
                    sample(tier: 1, at: 1_700_000_000_000, committed: nil, end: 2, retry: retry),
                ]
            ),
            observe(
                at: 1_700_000_002_000,
                [
                    sample(0, at: 1_700_000_002_000, committed: 6, end: 10, oldest: 1_700_000_001_500),
                    sample(tier: 1, at: 1_700_000_002_000, committed: nil, end: 2, retry: retry),
                ]
            ),
        ])
        var images = LagEvaluation.evaluate([
            observe(stage: "images", group: "marquee-images", members: 0, at: 1_700_000_002_000, [])
        ])
        images.missingTopics = ["marquee.images"]
        let report = LagReport(stages: [fetch, images], maxLag: 4)
        #expect(report.time == 1_700_000_002_000)
        #expect(report.exceeding.map(\.stage) == ["fetch"])

        let line = report.json()
        #expect(!line.contains("\n"))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(document.keys) == ["time", "time_ms", "max_lag", "max_lag_exceeded", "stages"])
        #expect(document["time"] as? String == "2023-11-14T22:13:22.000Z")
        #expect(number(document["time_ms"]) == 1_700_000_002_000)
        #expect(number(document["max_lag"]) == 4)
        #expect(document["max_lag_exceeded"] as? Bool == true)

        let stages = try #require(document["stages"] as? [[String: Any]])
        #expect(stages.count == 2)
        let stage = stages[0]
        #expect(
            Set(stage.keys) == [
                "stage", "group", "status", "reason", "members", "group_state", "samples", "window_seconds",
                "max_lag_exceeded", "totals", "partitions", "missing_topics", "notes", "other_consumers",
            ]
        )
        #expect(stage["other_consumers"] as? [String] == [], "a group with members reads nobody else's")
        #expect(stage["stage"] as? String == "fetch")
        #expect(stage["group"] as? String == "marquee-fetch")
        #expect(stage["status"] as? String == "OK")
        #expect(stage["group_state"] as? String == "Stable")
        #expect(number(stage["samples"]) == 2)
        #expect(number(stage["window_seconds"]) == 2)
        #expect(stage["max_lag_exceeded"] as? Bool == true)

        let totals = try #require(stage["totals"] as? [String: Any])
        #expect(
            Set(totals.keys) == [
                "lag", "lag_due", "not_yet_due", "overdue", "unscanned", "lag_seconds", "rate", "drain_seconds",
            ]
        )
        #expect(number(totals["lag"]) == 6)
        #expect(number(totals["lag_due"]) == 5)
        #expect(number(totals["not_yet_due"]) == 1)
        #expect(number(totals["overdue"]) == 1)
        #expect(number(totals["lag_seconds"]) == 0.5)
        #expect(number(totals["rate"]) == 3)
        #expect(number(totals["drain_seconds"]) == 1.667)

        let partitions = try #require(stage["partitions"] as? [[String: Any]])
        #expect(partitions.count == 2)
        let main = partitions[0]
        #expect(
            Set(main.keys) == [
                "topic", "partition", "tier", "committed", "start", "end", "lag", "lag_due", "lag_seconds",
                "oldest_timestamp_ms", "rate", "drain_seconds", "status", "not_yet_due", "overdue", "unscanned",
            ]
        )
        #expect(main["topic"] as? String == "marquee.fetch")
        #expect(main["tier"] is NSNull)
        #expect(number(main["committed"]) == 6)
        #expect(number(main["end"]) == 10)
        #expect(number(main["lag"]) == 4)
        #expect(number(main["oldest_timestamp_ms"]) == 1_700_000_001_500)
        #expect(main["overdue"] is NSNull)
        let tier = partitions[1]
        #expect(number(tier["tier"]) == 1)
        #expect(tier["committed"] is NSNull)
        #expect(number(tier["lag"]) == 2)
        #expect(number(tier["lag_due"]) == 1)
        #expect(tier["lag_seconds"] is NSNull)
        #expect(number(tier["not_yet_due"]) == 1)
        #expect(number(tier["overdue"]) == 1)
        #expect(number(tier["unscanned"]) == 0)

        let stopped = stages[1]
        #expect(stopped["status"] as? String == "OK", "no member, but nothing due: caught up, not stopped")
        #expect(stopped["missing_topics"] as? [String] == ["marquee.images"])
        #expect(stopped["max_lag_exceeded"] as? Bool == false)
        #expect((stopped["partitions"] as? [Any])?.isEmpty == true)
        let stoppedTotals = try #require(stopped["totals"] as? [String: Any])
        #expect(stoppedTotals["rate"] is NSNull)
        #expect(number(stoppedTotals["drain_seconds"]) == 0)
    }

    @Test func withoutALimitNothingExceedsIt() {
        let report = LagReport(stages: [
            LagEvaluation.evaluate([observe(at: 0, [sample(at: 0, committed: 0, end: 1_000_000)])])
        ])
        #expect(report.exceeding.isEmpty)
        #expect(report.json().contains("\"max_lag\":null"))
        #expect(report.json().contains("\"max_lag_exceeded\":false"))
    }

    @Test func theLimitComparesTheDueLagNotRetriesWaitingForTheirTime() {
        let waiting = RetryBacklog(notBefores: [5_000, 5_000, 5_000], unscanned: 0, now: 0)
        let stage = LagEvaluation.evaluate([
            observe(
                at: 0,
                [sample(at: 0, committed: 0, end: 2), sample(tier: 1, at: 0, committed: 0, end: 3, retry: waiting)]
            )
        ])
        #expect(stage.totals.lag == 5)
        #expect(stage.totals.dueLag == 2)
        #expect(LagReport(stages: [stage], maxLag: 2).exceeding.isEmpty)
        #expect(LagReport(stages: [stage], maxLag: 1).exceeding.map(\.stage) == ["fetch"])
    }
}

/// A JSON number as a Double, whatever Foundation parsed it as.
private func number(_ value: Any?) -> Double? {
    (value as? NSNumber)?.doubleValue
}
