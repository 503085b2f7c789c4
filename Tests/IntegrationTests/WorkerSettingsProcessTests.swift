import Foundation
import MarqueeTestSupport
import Testing

/// The worker executables read their shared settings through one layer: flags, environment, settings file,
/// defaults; they print them with `--print-config` and refuse a malformed one at start.
@Suite(.timeLimit(.minutes(2)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct WorkerSettingsProcessTests {
    static let executables = ["marquee-fetch", "marquee-images", "marquee-index"]

    @Test(arguments: executables)
    func printConfigShowsEachSettingWithItsOriginAndNoSecret(executable: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(TestEnvironment.uniqueName("settings"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("marquee.env").path
        try "MARQUEE_BROKERS=from-file:9092\nMARQUEE_SESSION_TIMEOUT=20s\n".write(toFile: file, atomically: true, encoding: .utf8)
        let secret = folder.appendingPathComponent("kafka.properties").path
        try "sasl.password=hunter2-\(executable)\n".write(toFile: secret, atomically: true, encoding: .utf8)

        let run = try await runBuiltExecutable(
            executable, ["--group", "crawl", "--print-config"],
            environment: [
                "MARQUEE_CONFIG": file, "MARQUEE_TOPIC_PREFIX": "staging.", "MARQUEE_KAFKA_PROPERTIES_FILE": secret,
                "MARQUEE_BROKERS": nil, "MARQUEE_GROUP": nil, "MARQUEE_SESSION_TIMEOUT": nil, "MARQUEE_KAFKA_PROPERTIES": nil,
            ]
        )
        #expect(run.status == 0, "\(run.standardError)")
        let lines = Set(run.standardOutput.split(separator: "\n").map(String.init))
        #expect(lines.contains("MARQUEE_GROUP=crawl  # flag"))
        #expect(lines.contains("MARQUEE_TOPIC_PREFIX=staging.  # env"))
        #expect(lines.contains("MARQUEE_BROKERS=from-file:9092  # file"))
        #expect(lines.contains("MARQUEE_SESSION_TIMEOUT=20s  # file"))
        #expect(lines.contains("MARQUEE_SHUTDOWN_TIMEOUT=30s  # default"))
        #expect(lines.contains("MARQUEE_KAFKA_PROPERTIES=<redacted>  # secret file"))
        #expect(!run.standardOutput.contains("hunter2"), "the secret is never printed")
    }

    @Test(arguments: executables)
    func aMalformedSettingStopsTheWorkerAtStartWithOneLine(executable: String) async throws {
        let run = try await runBuiltExecutable(executable, [], environment: ["MARQUEE_SESSION_TIMEOUT": "soon"])
        #expect(run.status == 78, "EX_CONFIG: \(run.standardError)")
        #expect(
            run.standardError
                == "\(executable): MARQUEE_SESSION_TIMEOUT (--session-timeout) 'soon' from the environment: expected a duration from 1s to 1h, such as 10s\n"
        )
    }
}
