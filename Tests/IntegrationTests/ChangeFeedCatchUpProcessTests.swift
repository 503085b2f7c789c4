import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeScheduler
import MarqueeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Two `marquee-producer` processes with a daily `tmdb.changes` schedule, started together after a three-day
/// outage (the state topic's last confirmed window is three days old): exactly the three missing days are
/// enqueued, oldest first, each once, whichever replica leads.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ChangeFeedCatchUpProcessTests {
    @Test func twoProducersCatchUpAThreeDayOutageOnceADay() async throws {
        let now = Int64(JobID.nowMilliseconds())
        // A daily window twelve hours from now: no new window comes due while the test runs.
        let hour = (now / 3_600_000 % 24 + 12) % 24
        let text = """
            schedules:
              - name: tmdb-changes-daily
                at: "\(hour < 10 ? "0" : "")\(hour):00"
                zone: UTC
                catch_up: 14
                jobs:
                  - kind: tmdb.changes
                    start_date: "${yesterday:iso}"
                    end_date: "${yesterday:iso}"
                    languages: [[en-US, ko-KR]]
            """
        let run = try await ProducerRun.start(schedule: text, now: now)
        defer { run.finish() }
        let schedule = run.schedule
        let latest = schedule.timing.window(atOrBefore: now, in: schedule.calendar)
        let day: Int64 = 86_400_000
        let missing = [latest - 2 * day, latest - day, latest]
        // The window state of a producer that last confirmed the window three days before the latest, then was
        // down: the state topic as the producer makes it (one partition, compacted), with its claim and `done`.
        let stateTopic = "\(run.prefix)producer.windows"
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        try await admin.createTopics([
            .init(name: stateTopic, partitions: 1, configs: ["cleanup.policy": "compact"])
        ])
        let settled = latest - 3 * day
        _ = try await withProducer { producer in
            try await producer.send(
                [WindowMarker.Phase.claimed, .done].map { phase in
                    let marker = WindowMarker(
                        phase: phase,
                        schedule: schedule.name,
                        window: settled,
                        owner: "before-the-outage",
                        at: settled,
                        jobs: 1
                    )
                    return KafkaProducerMessage(
                        topic: stateTopic,
                        key: Array(marker.key.utf8),
                        value: marker.encoded(),
                        headers: []
                    )
                }
            )
        }

        let first = try run.startProducer("a")
        let second = try run.startProducer("b")
        try await run.log.wait("one producer leading, the other standing by, three windows fired") { log in
            log.fired.values.reduce(0, +) >= 3 && log.leaders.count == 1 && log.standbys.count == 1
        }
        let leader = try #require(run.log.snapshot.leaders.first)
        // The leader says what it caught up, on /metrics as in its log: three windows, no gap for a backfill.
        let base = try #require(run.log.snapshot.metrics[leader])
        let (status, metrics) = try await httpGet(base + "/metrics")
        #expect(status == 200)
        #expect(metrics.contains(#"marquee_producer_catch_up_windows{schedule="tmdb-changes-daily"} 3"#), "\(metrics)")
        #expect(metrics.contains(#"marquee_producer_backfill_windows{schedule="tmdb-changes-daily"} 0"#))

        for producer in [first, second] { producer.signal(SIGTERM) }
        #expect(await first.waitForExit() == 0)
        #expect(await second.waitForExit() == 0)
        // Both are gone, so nothing more is sent: a fence on each partition of the fetch topic, read after
        // everything they sent, says the reader has seen it all.
        let fetchTopic = StageTopics(stage: "fetch", prefix: run.prefix, tiers: 0).main
        _ = try await withProducer { producer in
            try await producer.send(
                (0..<2).map { partition in
                    var message = KafkaProducerMessage(
                        topic: fetchTopic,
                        key: Array("fence".utf8),
                        value: FetchJob.tmdbGenres(language: "en").encoded(),
                        headers: Envelope.root().kafkaHeaders + [KafkaHeader(key: "marquee-window", value: "fence")]
                    )
                    message.partition = Int32(partition)
                    return message
                }
            )
        }
        try await run.fetched.wait("both fences read") { $0.windows["fence"]?.count == 2 }

        var fetched = run.fetched.snapshot
        fetched.windows["fence"] = nil
        let log = run.log.snapshot
        #expect(
            Set(fetched.windows.keys) == Set(missing.map { UTCInstant(milliseconds: $0).iso8601 }),
            "\(fetched); \(log)"
        )
        #expect(log.resent.isEmpty, "\(log)")
        for window in missing {
            let id = schedule.jobID(window: window, index: 0).rawValue
            #expect(fetched.windows[UTCInstant(milliseconds: window).iso8601] == [id])
            #expect(fetched.counts[id] == 1, "\(fetched)")
        }
        // One job a day: the day before each missed window, oldest first.
        let days = missing.map { UTCInstant(milliseconds: $0).date.adding(days: -1).description }
        #expect(fetched.changeDays.sorted() == days, "\(fetched.changeDays)")
        #expect(fetched.changeDays.count == 3)
        // Each says the scheduler made it (the fences, sent by hand, say nothing).
        #expect(fetched.refreshes == ["schedule": 3, "none": 2])
    }
}
