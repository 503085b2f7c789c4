import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `marquee drain`'s failure paths (its success path runs in RunScriptTests, under `make run`'s script).
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DrainCLITests {
    @Test func aStageWithLagIsNotDrainedAndTheCommandSaysWhatIsPending() async throws {
        let prefix = TestEnvironment.uniqueName("mqd") + "."
        let environment: [String: String?] = [
            "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_TOPIC_PARTITIONS": "2",
            "MARQUEE_CONFIG": nil, "MARQUEE_STORE": "sqlite:/tmp/\(TestEnvironment.uniqueName("drain")).db",
        ]
        let created = try await runBuiltExecutable("marquee", ["topics", "create"], environment: environment)
        #expect(created.status == 0, "\(created.standardError)")
        // Three jobs nobody consumes.
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.send(
                (0..<3).map { KafkaProducerMessage(topic: "\(prefix)fetch", key: "k\($0)", value: "{}") }
            )
        }
        let run = try await runBuiltExecutable(
            "marquee",
            ["drain", "--max-wait", "2s", "--interval", "200ms"],
            environment: environment
        )
        #expect(run.status == 1)
        #expect(run.standardError.contains("not drained after 2s: fetch lag 3"), "\(run.standardError)")
        #expect(run.standardOutput.contains("fetch lag 3"), "the progress line shows the lag: \(run.standardOutput)")
    }

    /// The workers consume in another group than the one drain reads (a `MARQUEE_GROUP` given to the workers and
    /// not to the tools): drain names the group it reads, the group that consumes, and the variable, within its
    /// 30 seconds, instead of waiting silently; reading the right group, it says nothing of the sort.
    @Test func workersInAnotherGroupAreNamedWithTheVariableThatPicksTheGroup() async throws {
        let prefix = TestEnvironment.uniqueName("mqdg") + "."
        let elsewhere = TestEnvironment.uniqueName("elsewhere-fetch")
        let keys = ["TMDB_API_KEY", "KOFIC_API_KEY", "KAKAO_REST_API_KEY"]
        var environment: [String: String?] = [
            "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_TOPIC_PARTITIONS": "2",
            "MARQUEE_CONFIG": nil, "MARQUEE_STORE": "sqlite:/tmp/\(TestEnvironment.uniqueName("drain")).db",
            "MARQUEE_RETRY_DELAYS": "200ms,400ms,800ms", "MARQUEE_KAFKA_PROPERTIES": "batch.num.messages=1",
        ]
        for stage in ["FETCH", "IMAGES", "RECORDS"] { environment["MARQUEE_GROUP_\(stage)"] = String?.none }
        let created = try await runBuiltExecutable("marquee", ["topics", "create"], environment: environment)
        #expect(created.status == 0, "\(created.standardError)")

        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--movies", "100"])
        defer { emulator.terminate() }
        let (worker, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: Dictionary(uniqueKeysWithValues: keys.map { ($0, "marquee-emulator") }).merging([
                "MARQUEE_GROUP": elsewhere, "MARQUEE_TOPIC_PARTITIONS": "2",
            ]) { $1 }
        )
        defer { worker.signal(SIGKILL) }
        let enqueued = try await runBuiltExecutable(
            "marquee",
            ["enqueue", "tmdb-list", "popular", "--pages", "1-2"],
            environment: environment
        )
        #expect(enqueued.status == 0, "\(enqueued.standardError)")
        // The worker's group has consumed (and committed on) the fetch topic before drain starts.
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !admin.committedOffsets(group: elsewhere).keys.contains(where: { $0.topic == "\(prefix)fetch" })
        {
            try #require(ContinuousClock.now < deadline, "the worker in \(elsewhere) never committed")
            try await Task.sleep(for: .milliseconds(200))
        }

        let started = ContinuousClock.now
        let run = try await runBuiltExecutable(
            "marquee",
            ["drain", "--max-wait", "30s", "--interval", "500ms"],
            environment: environment
        )
        #expect(ContinuousClock.now - started < .seconds(45))
        #expect(run.status == 1, "not drained: the records stage has no indexer")
        let notice =
            "fetch: group \(prefix)fetch has no member and lag 2 while \(elsewhere) consumes its topics; "
            + "MARQUEE_GROUP_FETCH picks the group read here (MARQUEE_GROUP_FETCH=\(elsewhere))"
        #expect(run.standardOutput.contains("marquee: " + notice), "\(run.standardOutput)")
        #expect(run.standardError.contains("marquee: " + notice), "the timeout repeats it: \(run.standardError)")
        #expect(!run.standardOutput.contains("records: group"), "nobody else consumes records: \(run.standardOutput)")

        // `marquee lag` (and the dashboard, on the same sampler) says the same in the stage's reason.
        let lag = try await runBuiltExecutable(
            "marquee",
            ["lag", "--stage", "fetch", "--json", "--samples", "1"],
            environment: environment
        )
        #expect(lag.status == 0, "\(lag.standardError)")
        let report = try JSONValue.parse(Array(lag.standardOutput.utf8))
        guard case .object(let document) = report, case .array(let stages)? = document["stages"],
            case .object(let stage)? = stages.first
        else {
            Issue.record("not a lag report: \(lag.standardOutput)")
            return
        }
        #expect(stage["other_consumers"] == .array([.string(elsewhere)]), "\(lag.standardOutput)")
        #expect(stage["reason"] == .string(String(notice.dropFirst("fetch: ".count))), "\(lag.standardOutput)")
        #expect(stage["status"] == .string("STOPPED"))

        // Told the workers' group, drain reads it: no such notice.
        environment["MARQUEE_GROUP_FETCH"] = elsewhere
        let right = try await runBuiltExecutable(
            "marquee",
            ["drain", "--max-wait", "15s", "--interval", "500ms"],
            environment: environment
        )
        #expect(right.status == 1)
        #expect(!right.standardOutput.contains("fetch: group"), "\(right.standardOutput)")
        #expect(right.standardError.contains("not drained after 15s: records lag"), "\(right.standardError)")
        #expect(!right.standardError.contains("fetch lag"), "\(right.standardError)")
    }

    @Test func badArgumentsAreNamed() async throws {
        let missing = try await runBuiltExecutable("marquee", ["drain", "--roots", "/nonexistent/roots.txt"])
        #expect(missing.status == 66)
        #expect(missing.standardError.contains("cannot read /nonexistent/roots.txt"))
        let interval = try await runBuiltExecutable("marquee", ["drain", "--interval", "soon"])
        #expect(interval.status == 64)
        #expect(interval.standardError.contains("--interval: 'soon' is not a duration"))
    }
}
