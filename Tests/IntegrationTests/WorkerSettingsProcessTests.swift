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
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("settings")
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("marquee.env").path
        try "MARQUEE_BROKERS=from-file:9092\nMARQUEE_SESSION_TIMEOUT=20s\n".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        let secret = folder.appendingPathComponent("kafka.properties").path
        try "sasl.password=hunter2-\(executable)\n".write(toFile: secret, atomically: true, encoding: .utf8)

        let run = try await runBuiltExecutable(
            executable,
            ["--group", "crawl", "--print-config"],
            environment: [
                "MARQUEE_CONFIG": file, "MARQUEE_TOPIC_PREFIX": "staging.", "MARQUEE_KAFKA_PROPERTIES_FILE": secret,
                "MARQUEE_BROKERS": nil, "MARQUEE_GROUP": nil, "MARQUEE_SESSION_TIMEOUT": nil,
                "MARQUEE_KAFKA_PROPERTIES": nil,
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

/// Each executable's own settings go through the same layer as the shared ones: printed with where they came
/// from, a secret never shown, a malformed one refused at start (where it once fell back to the default).
extension WorkerSettingsProcessTests {
    @Test func theFetchWorkersOwnSettingsAndKeysArePrintedFromEveryLayer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("settings")
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("marquee.env").path
        try "KOFIC_DAILY_BUDGET=2500\nKAKAO_BASE_URL=http://127.0.0.1:9/kakao\n".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        let key = folder.appendingPathComponent("tmdb.key").path
        try "tmdb-key-hunter2\n".write(toFile: key, atomically: true, encoding: .utf8)

        let run = try await runBuiltExecutable(
            "marquee-fetch",
            ["--config", file, "--rate-limits", "tmdb=20", "--no-allow-private-addresses", "--print-config"],
            environment: [
                "TMDB_API_KEY_FILE": key, "KOFIC_API_KEY": "kofic-key-hunter2", "MARQUEE_CONFIG": nil,
                "TMDB_API_KEY": nil,
                "KOFIC_DAILY_BUDGET": nil, "KAKAO_BASE_URL": nil, "MARQUEE_FETCH_RATE_LIMITS": nil,
                "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1",
            ]
        )
        #expect(run.status == 0, "\(run.standardError)")
        let lines = Set(run.standardOutput.split(separator: "\n").map(String.init))
        #expect(lines.contains("MARQUEE_FETCH_RATE_LIMITS=tmdb=20  # flag"), "\(run.standardOutput)")
        #expect(lines.contains("MARQUEE_ALLOW_PRIVATE_ADDRESSES=0  # flag"), "the flag wins over the environment's 1")
        #expect(lines.contains("KOFIC_DAILY_BUDGET=2500  # file"))
        #expect(lines.contains("KAKAO_BASE_URL=http://127.0.0.1:9/kakao  # file"))
        #expect(lines.contains("TMDB_API_KEY=<redacted>  # secret file"))
        #expect(lines.contains("KOFIC_API_KEY=<redacted>  # env"))
        #expect(lines.contains("MARQUEE_VALIDATOR_CACHE=memory  # default"))
        #expect(!run.standardOutput.contains("hunter2"), "no key is ever printed")
    }

    @Test(arguments: [
        (
            "marquee-fetch", "KOFIC_DAILY_BUDGET", "lots",
            "KOFIC_DAILY_BUDGET (--kofic-daily-budget) 'lots' from the environment: expected a whole number from 0 to 100000000"
        ),
        (
            "marquee-fetch", "TMDB_BASE_URL", "ftp://x",
            "TMDB_BASE_URL 'ftp://x' from the environment: expected an http or https URL"
        ),
        (
            "marquee-fetch", "MARQUEE_FETCH_RATE_LIMITS", "imdb=5",
            "MARQUEE_FETCH_RATE_LIMITS (--rate-limits) 'imdb=5' from the environment: expected source=rate pairs"
        ),
        (
            "marquee-images", "MARQUEE_WEBP_QUALITY", "0",
            "MARQUEE_WEBP_QUALITY (--webp-quality) '0' from the environment: expected a whole number from 1 to 100"
        ),
        (
            "marquee-images", "MARQUEE_IMAGE_ORIGINALS", "maybe",
            "MARQUEE_IMAGE_ORIGINALS (--originals) 'maybe' from the environment: expected 1 or 0"
        ),
        (
            "marquee-index", "MARQUEE_INDEX_BATCH_SIZE", "lots",
            "MARQUEE_INDEX_BATCH_SIZE (--batch-size) 'lots' from the environment: expected a whole number from 1 to 10000"
        ),
        (
            "marquee-index", "MARQUEE_STORE", "mysql://root:hunter2@db/x",
            "MARQUEE_STORE (--store) from the environment: expected sqlite:PATH or postgres://"
        ),
        (
            "marquee-producer", "MARQUEE_PRODUCER_CLAIM_TIMEOUT", "1s",
            "MARQUEE_PRODUCER_CLAIM_TIMEOUT (--claim-timeout) '1s' from the environment: expected a duration from 4s to 24h"
        ),
    ])
    func anExecutablesOwnMalformedSettingStopsItAtStart(
        executable: String,
        name: String,
        value: String,
        message: String
    ) async throws {
        let run = try await runBuiltExecutable(
            executable,
            executable == "marquee-producer" ? ["--schedule", "/nonexistent/schedule.yaml"] : [],
            environment: [name: value, "MARQUEE_CONFIG": nil]
        )
        #expect(run.status == 78, "EX_CONFIG: \(run.standardError)")
        #expect(run.standardError.hasPrefix("\(executable): \(message)"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1)
        #expect(!run.standardError.contains("hunter2"), "a secret's value is never shown")
    }

    @Test func theProducerPrintsItsSettings() async throws {
        let run = try await runBuiltExecutable(
            "marquee-producer",
            ["--print-config", "--claim-timeout", "2m"],
            environment: [
                "MARQUEE_SCHEDULE": "/etc/marquee/schedule.yaml", "MARQUEE_CONFIG": nil,
                "MARQUEE_PRODUCER_CLAIM_TIMEOUT": nil,
            ]
        )
        #expect(run.status == 0, "\(run.standardError)")
        let lines = Set(run.standardOutput.split(separator: "\n").map(String.init))
        #expect(lines.contains("MARQUEE_SCHEDULE=/etc/marquee/schedule.yaml  # env"))
        #expect(lines.contains("MARQUEE_PRODUCER_CLAIM_TIMEOUT=2m  # flag"))
        #expect(lines.contains("MARQUEE_PRODUCER_STATE_REPLICATION=-1  # default"))
    }

    /// `marquee` reads every setting of its settings file, the broker's included, in every subcommand.
    @Test func theOperatorToolReadsItsSettingsFileInEverySubcommand() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("settings")
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("marquee.env").path
        let missing = folder.appendingPathComponent("nothing.db").path
        try "MARQUEE_BROKERS=127.0.0.1:1\nMARQUEE_STORE=sqlite:\(missing)\nMARQUEE_TOPIC_PREFIX=filed.\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let environment: [String: String?] = [
            "MARQUEE_CONFIG": nil, "MARQUEE_BROKERS": nil, "MARQUEE_STORE": nil, "MARQUEE_TOPIC_PREFIX": nil,
        ]

        // The broker named only in the file is the one asked: nothing listens there.
        for arguments in [["topics", "list"], ["lag"], ["enqueue", "tmdb-genres"], ["dlq", "list"]] {
            let run = try await runBuiltExecutable(
                "marquee",
                arguments + ["--config", file, "--timeout", "2"],
                environment: environment
            )
            #expect(run.status == 69, "\(arguments): \(run.standardError)")
        }
        let query = try await runBuiltExecutable(
            "marquee",
            ["query", "counts", "--config", file],
            environment: environment
        )
        #expect(query.status == 66, "\(query.standardError)")
        #expect(query.standardError.contains("no store at sqlite:\(missing)"), "\(query.standardError)")

        let printed = try await runBuiltExecutable(
            "marquee",
            ["lag", "--config", file, "--print-config"],
            environment: environment
        )
        #expect(printed.status == 0, "\(printed.standardError)")
        let lines = Set(printed.standardOutput.split(separator: "\n").map(String.init))
        #expect(lines.contains("MARQUEE_BROKERS=127.0.0.1:1  # file"))
        #expect(lines.contains("MARQUEE_TOPIC_PREFIX=filed.  # file"))
        #expect(lines.contains("MARQUEE_STORE=<redacted>  # file"))

        let malformed = try await runBuiltExecutable(
            "marquee",
            ["topics", "list"],
            environment: ["MARQUEE_CONFIG": nil, "MARQUEE_TOPIC_PARTITIONS": "many"]
        )
        #expect(malformed.status == 78, "\(malformed.standardError)")
        #expect(
            malformed.standardError
                == "marquee: MARQUEE_TOPIC_PARTITIONS 'many' from the environment: expected a whole number from 1 to 10000\n"
        )
    }
}
