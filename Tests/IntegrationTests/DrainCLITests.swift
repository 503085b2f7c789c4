import MarqueeKafka
import MarqueeTestSupport
import Testing

/// `marquee drain`'s failure paths (its success path runs in RunScriptTests, under `make run`'s script).
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
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

    @Test func badArgumentsAreNamed() async throws {
        let missing = try await runBuiltExecutable("marquee", ["drain", "--roots", "/nonexistent/roots.txt"])
        #expect(missing.status == 66)
        #expect(missing.standardError.contains("cannot read /nonexistent/roots.txt"))
        let interval = try await runBuiltExecutable("marquee", ["drain", "--interval", "soon"])
        #expect(interval.status == 64)
        #expect(interval.standardError.contains("--interval: 'soon' is not a duration"))
    }
}
