import MarqueeKafka
import MarqueeOperations
import Testing

@Suite struct LagReportTextTests {
    static let t0: Int64 = 1_700_000_000_000

    /// fetch over two samples 2 s apart: partition 0 committed 6 of 10, partitions 1 and 2 idle; images with no
    /// topic yet.
    static func report(maxLag: Int64? = nil, retry: Bool = false) -> LagReport {
        var first = [
            sample(0, at: t0, committed: 0, end: 10), sample(1, at: t0, committed: 5, end: 5),
            sample(2, at: t0, committed: 7, end: 7),
        ]
        var second = [
            sample(0, at: t0 + 2000, committed: 6, end: 10), sample(1, at: t0 + 2000, committed: 5, end: 5),
            sample(2, at: t0 + 2000, committed: 7, end: 7),
        ]
        if retry {
            let backlog = RetryBacklog(notBefores: [t0 + 60_000, t0], unscanned: 0, now: t0 + 2000)
            first.append(sample(tier: 1, at: t0, committed: nil, end: 2, retry: backlog))
            second.append(sample(tier: 1, at: t0 + 2000, committed: nil, end: 2, retry: backlog))
        }
        let fetch = evaluate([observe(at: t0, first), observe(at: t0 + 2000, second)])
        var images = evaluate([observe(stage: "images", group: "marquee-images", members: 0, at: t0 + 2000, [])])
        images.missingTopics = ["marquee.images"]
        return LagReport(stages: [fetch, images], maxLag: maxLag)
    }

    @Test func idlePartitionsShareARowAndEveryStageHasItsBlock() {
        let text = Self.report().text()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "2023-11-14T22:13:22Z, 2 samples over 2s")
        #expect(lines.contains { $0.hasPrefix("fetch — group marquee-fetch, 1 member") && $0.hasSuffix(": OK") })
        #expect(lines.contains("  4 messages due, consuming at 3.0/s"))
        #expect(
            lines.contains("  TOPIC            PARTITION  COMMITTED  END  LAG  LAG AGE  RATE/S  DRAIN  STATUS")
        )
        #expect(lines.contains("  marquee.fetch            0          6   10    4        —     3.0   1.3s"))
        #expect(lines.contains("  marquee.fetch  2 more idle                    0              0.0"))
        #expect(lines.contains("  total (due 4)                                 4        —     3.0   1.3s"))
        #expect(lines.contains("  note: marquee.images does not exist yet (no lag)"))
        #expect(lines.contains("  no topics yet"))
        #expect(!text.contains("OVERDUE"))
    }

    @Test func everyPartitionIsListedWhenAskedAndRetryTiersAddTheirColumns() {
        let all = Self.report().text(allPartitions: true)
        #expect(!all.contains("idle"))
        #expect(all.contains("  marquee.fetch          2          7    7    0        —     0.0\n"))
        let retry = Self.report(retry: true).text()
        #expect(retry.contains("OVERDUE  NOT DUE  STATUS"))
        #expect(retry.split(separator: "\n").contains { $0.hasPrefix("  marquee.fetch.retry.1") })
    }

    @Test func aStageAboveTheLimitSaysSoInItsHeading() {
        let text = Self.report(maxLag: 3).text()
        #expect(text.contains(": OK — due lag 4 above --max-lag 3\n"))
        let frame = Self.report().watchFrame(interval: .seconds(1), samples: 10, observed: 2, allPartitions: false)
        #expect(
            frame.hasPrefix(
                "marquee lag — every 1s, status over the last 10 samples (2 so far) — Ctrl-C to stop\n\n2023-"
            )
        )
    }
}

@Suite struct LagTargetSelectionTests {
    let layout = try! PipelineLayout(settings: ["MARQUEE_GROUP_IMAGES": "posters"])

    @Test func everyStageWithItsGroupUnlessNamed() throws {
        let all = try LagTarget.selecting(stages: nil, groups: [], layout: self.layout)
        #expect(all.map(\.stage) == ["fetch", "images", "records"])
        #expect(all.map(\.group) == ["marquee.fetch", "posters", "marquee.records"])
        let some = try LagTarget.selecting(stages: " images , fetch", groups: ["fetch=canary"], layout: self.layout)
        #expect(some.map(\.stage) == ["fetch", "images"])
        #expect(some.map(\.group) == ["canary", "posters"])
        let one = try LagTarget.selecting(stages: "records", groups: ["replay"], layout: self.layout)
        #expect(one.map(\.group) == ["replay"])
    }

    @Test func mistakesNameTheOption() {
        func reason(_ stages: String?, _ groups: [String]) -> String? {
            do {
                _ = try LagTarget.selecting(stages: stages, groups: groups, layout: self.layout)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason("fetch,videos", []) == "--stage: no stage 'videos' (stages: fetch, images, records)")
        #expect(reason(" , ", []) == "--stage: name at least one stage")
        #expect(reason("fetch", ["images=x"]) == "--group images=x: stage 'images' is not shown (see --stage)")
        // `fetch=` is not a pair (nothing after `=`): with several stages shown it is refused as a bare name.
        #expect(reason(nil, ["fetch="]) == "--group fetch=: give stage=group, or show one stage (--stage)")
        #expect(reason(nil, ["x"]) == "--group x: give stage=group, or show one stage (--stage)")
    }
}

@Suite struct DurationIntervalTests {
    @Test func unitsAndBareSecondsAreRead() {
        #expect(Duration(interval: "500ms") == .milliseconds(500))
        #expect(Duration(interval: " 1.5s ") == .milliseconds(1500))
        #expect(Duration(interval: "2m") == .seconds(120))
        #expect(Duration(interval: "1h") == .seconds(3600))
        #expect(Duration(interval: "3") == .seconds(3))
    }

    @Test func nothingOutsideAMillisecondToADayIsAnInterval() {
        for text in ["0", "-1s", "0.1ms", "25h", "1d", "", "s", "nan", "inf"] {
            #expect(Duration(interval: text) == nil, "\(text)")
        }
        #expect(Duration(interval: "24h") == .seconds(86_400))
    }
}
