import MarqueeCore
import MarqueeGzip
import MarqueeHTTP
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.FileManager

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// `marquee enqueue tmdb-export` as a process against the emulator's export and the real broker: every admitted
/// id enqueued once, a stopped or killed run resumed without sending an id twice, memory flat over 100,000 lines,
/// and a backfill through the real fetch worker into both stores.
@Suite(.serialized, .timeLimit(.minutes(6)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct EnqueueExportCLITests {
    static let day = "2025-03-07"

    /// A folder for state files and downloads, removed by the caller.
    static func folder() throws -> String {
        let path = "/tmp/\(TestEnvironment.uniqueName("tmdb-export"))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The ids of the emulator's export that are not adult, in the export's order.
    static func admittedIDs(_ emulator: UpstreamEmulatorProcess, folder: String) async throws -> [Int64] {
        let path = folder + "/expected.json.gz"
        let outcome = try await HTTPFileDownload.download(
            emulator.tmdbExportBaseURL + "/movie_ids_03_07_2025.json.gz",
            to: path,
            userAgent: "marquee-test"
        )
        #expect(outcome.status == 200)
        let reader = try TMDBExportReader(path: path)
        var ids: [Int64] = []
        while let (_, line) = try reader.nextLine() {
            let entry = try TMDBExportEntry.parse(line).get()
            if !entry.isAdult { ids.append(entry.id) }
        }
        try FileManager.default.removeItem(atPath: path)
        return ids
    }

    /// The movie ids of every job on `topic` (each a root refreshing for the backfill).
    static func enqueuedIDs(_ topic: String) async throws -> [Int64] {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let count = try await admin.watermarks(topic: topic).values.reduce(0) { $0 + Int($1.end) }
        guard count > 0 else { return [] }
        return try await read(count, from: topic).map { message in
            #expect(try envelope(of: message).refresh == .backfill)
            guard case .tmdbMovie(let id, _, _) = try FetchJob.decode(message.value) else {
                Issue.record("not a detail job: \(message.keyString ?? "")")
                return 0
            }
            return id
        }
    }

    /// The command's arguments; `singleRecordBatches` where the test reads end offsets: the test broker's are
    /// right only with one record a batch (ENVIRONMENT.md).
    static func arguments(
        _ prefix: String,
        state: String,
        _ more: [String],
        singleRecordBatches: Bool = true
    ) -> [String] {
        ["enqueue", "tmdb-export", "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix, "--state", state]
            + (singleRecordBatches ? ["-X", "batch.num.messages=1"] : []) + more
    }

    /// Starts the command as a child process; returns it once its state file records a delivered batch.
    static func startAndAwaitFirstBatch(_ arguments: [String], state: String) async throws -> ChildProcess {
        let process = try ChildProcess("marquee", arguments: arguments, readsStandardError: true) { _ in }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        // The state file is the only sign of a delivered batch a separate process gives: read it as it changes.
        while clock.now < deadline {
            if let checkpoint = try? TMDBExportCheckpoint.read(from: state), checkpoint.jobs > 0 {
                #expect(!checkpoint.isComplete, "the run must still be going to be stopped")
                return process
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.signal(SIGKILL)
        Issue.record("\(state) recorded no delivered batch within 60 s")
        throw CancellationError()
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func everyIDIsEnqueuedOnceAcrossAStopAndAResume(signal: Int32) async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "21", "--movies", "3000"])
        defer { emulator.terminate() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prefix = TestEnvironment.uniqueName("mqb") + "."
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 0)
        _ = try await StageTopics.createAll(
            [fetch],
            partitions: 2,
            admin: try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        )
        let expected = try await Self.admittedIDs(emulator, folder: folder)
        #expect(expected.count > 2900)
        let state = folder + "/backfill.state"
        let options = [
            "--date", Self.day, "--export-base-url", emulator.tmdbExportBaseURL, "--details", "--max-backlog", "0",
        ]

        // 100 jobs a second: batches of 250, half a minute in all, so a loaded machine still stops it after the
        // first batch and long before the last.
        let first = try await Self.startAndAwaitFirstBatch(
            Self.arguments(prefix, state: state, options + ["--rate", "100"]),
            state: state
        )
        first.signal(signal)
        let status = await first.waitForExit(killingAfter: .seconds(30))
        #expect(status == (signal == SIGTERM ? 75 : SIGKILL), "SIGTERM stops after the batch in flight (exit 75)")
        let stopped = try #require(try TMDBExportCheckpoint.read(from: state))
        #expect(!stopped.isComplete && stopped.jobs > 0 && stopped.jobs < expected.count)
        #expect(FileManager.default.fileExists(atPath: folder + "/movie_ids_03_07_2025.json.gz"), "kept for --resume")

        // Without --resume the state file is not overwritten.
        let refused = try await runMarquee(Self.arguments(prefix, state: state, options))
        #expect(refused.status == 64)
        #expect(refused.standardError.contains("--resume to continue it"), "\(refused.standardError)")

        let resumed = try await runMarquee(Self.arguments(prefix, state: state, options + ["--resume", "--rate", "0"]))
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(
            resumed.standardError.contains("\(TextFormat.grouped(expected.count)) jobs sent to \(fetch.main)"),
            "\(resumed.standardError)"
        )
        let final = try #require(try TMDBExportCheckpoint.read(from: state))
        #expect(final.isComplete && final.jobs == expected.count)
        #expect(!FileManager.default.fileExists(atPath: folder + "/movie_ids_03_07_2025.json.gz"), "removed when done")

        let enqueued = try await Self.enqueuedIDs(fetch.main)
        let missing = Set(expected).subtracting(enqueued)
        let extra = Set(enqueued).subtracting(expected)
        #expect(
            missing.isEmpty && extra.isEmpty,
            "none skipped: \(missing.count) missing \(missing.sorted().prefix(5)), \(extra.count) not in the export \(extra.sorted().prefix(5)); \(enqueued.count) read"
        )
        let repeated = enqueued.count - Set(enqueued).count
        if signal == SIGTERM {
            #expect(repeated == 0, "a stopped run resumed sends no id twice")
        } else {
            // SIGKILL can land between the broker's confirmation and the state file's rename: at most the batch
            // in flight (250 jobs) is sent again.
            #expect(repeated <= 250, "\(repeated) ids sent twice")
        }

        // A complete run is not sent again.
        let again = try await runMarquee(Self.arguments(prefix, state: state, options + ["--resume"]))
        #expect(again.status == 0 && again.standardError.contains("nothing to resume"), "\(again.standardError)")
    }

    @Test func aMissingExportAndAMalformedFileAreClearErrors() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "21", "--movies", "50"])
        defer { emulator.terminate() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prefix = TestEnvironment.uniqueName("mqm") + "."
        let missing = try await runMarquee(
            Self.arguments(
                prefix,
                state: folder + "/a.state",
                ["--date", "2999-01-01", "--export-base-url", emulator.tmdbExportBaseURL, "--details"]
            )
        )
        #expect(missing.status == 66)
        #expect(missing.standardError.contains("movie_ids_01_01_2999.json.gz (404)"), "\(missing.standardError)")

        let cut = folder + "/cut.json.gz"
        let compressed = try GzipEncoder.compress(Array(#"{"id":1,"popularity":5}\#n"#.utf8))
        #expect(FileManager.default.createFile(atPath: cut, contents: Data(compressed.dropLast(4))))
        let truncated = try await runMarquee(
            Self.arguments(prefix, state: folder + "/b.state", ["--file", cut, "--details", "--dry-run"])
        )
        #expect(truncated.status == 65)
        #expect(truncated.standardError.contains("is cut off after line 1"), "\(truncated.standardError)")
    }

    /// The peak resident memory of `marquee` sending an export of `lines` movies from a file.
    static func peakResidentBytes(lines: Int, prefix: String, folder: String) async throws -> Int {
        let path = folder + "/movie_ids_\(lines).json.gz"
        let encoder = try GzipEncoder()
        var compressed: [UInt8] = []
        var text: [UInt8] = []
        for id in 1...lines {
            text += Array(
                #"{"adult":false,"id":\#(id * 7),"original_title":"Movie number \#(id)","popularity":\#(Double(id % 900) / 9),"video":false}\#n"#
                    .utf8
            )
            if text.count > 1 << 16 {
                encoder.encode(text, into: &compressed)
                text.removeAll(keepingCapacity: true)
            }
        }
        encoder.encode(text, into: &compressed)
        encoder.finish(into: &compressed)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(compressed)))
        let process = try ChildProcess(
            "marquee",
            arguments: Self.arguments(
                prefix,
                state: folder + "/\(lines).state",
                ["--file", path, "--details", "--rate", "0", "--max-backlog", "0", "--quiet"],
                singleRecordBatches: false
            ),
            readsStandardError: true
        ) { _ in }
        let exit = ExitBox()
        var peak = 0
        await withTaskGroup(of: Void.self) { group in
            group.addTask { exit.set(await process.waitForExit()) }
            // VmHWM only grows; sampled until the process ends (it is gone with the process).
            while exit.status == nil {
                if let bytes = process.peakResidentBytes { peak = max(peak, bytes) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(exit.status == 0)
        return peak
    }

    @Test func memoryStaysFlatOverAHundredThousandLines() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prefix = TestEnvironment.uniqueName("mqr") + "."
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 0)
        _ = try await StageTopics.createAll(
            [fetch],
            partitions: 2,
            admin: try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        )

        let small = try await Self.peakResidentBytes(lines: 1000, prefix: prefix, folder: folder)
        let large = try await Self.peakResidentBytes(lines: 100_000, prefix: prefix, folder: folder)
        // The 100,000 lines are 11 MB of text and 100,000 jobs of about 300 bytes each (30 MB) if held at once.
        print("tmdb-export peak RSS: 1,000 lines \(small / 1024) KiB, 100,000 lines \(large / 1024) KiB")
        #expect(large > 0 && small > 0)
        // Flat: allocator arenas and librdkafka's buffers vary by a few MiB with the machine's load, far below the
        // 41 MB that holding the lines or the jobs would add.
        #expect(large - small < 20 << 20, "peak RSS grew by \((large - small) >> 20) MiB from 1,000 to 100,000 lines")
        // Delivered, as each run's state file records after the broker confirmed it.
        for lines in [1000, 100_000] {
            let state = try #require(try TMDBExportCheckpoint.read(from: folder + "/\(lines).state"))
            #expect(state.isComplete && state.jobs == lines)
        }
    }

    @Test func aBackfillLandsThroughTheFetchWorkerInBothStores() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "22", "--movies", "120", "--tmdb-key", "tmdb-key-22",
        ])
        defer { emulator.terminate() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (prefix, _, records) = try await pipelineTopics("mqk", fetchTiers: 1, recordsTiers: 1)
        let sqlitePath = folder + "/backfill.db"
        defer { removeSQLiteFiles(sqlitePath) }
        let sqlite = try StoreLocation(parsing: "sqlite:\(sqlitePath)")
        let postgres = try await freshPostgresDatabase()
        let (fetcher, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: ["TMDB_API_KEY": "tmdb-key-22"]
        )
        let indexers = [
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: sqlite),
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: postgres),
        ]
        let expected = try await Self.admittedIDs(emulator, folder: folder)

        let run = try await runMarquee(
            Self.arguments(
                prefix,
                state: folder + "/backfill.state",
                ["--date", Self.day, "--export-base-url", emulator.tmdbExportBaseURL, "--details", "--rate", "200"]
            )
        )
        #expect(run.status == 0, "\(run.standardError)")
        // One outcome a detail job; with them, how many records each indexer must store.
        let reports = try await read(expected.count, from: records.main) { !isEntityRecord($0) }
        let outcomes = try reports.map { try JobOutcome.decode(try Record.decode($0.value)) }
        #expect(outcomes.allSatisfy { $0.outcome == .done }, "\(outcomes.filter { $0.outcome != .done }.prefix(3))")
        let stored = outcomes.reduce(outcomes.count) { $0 + ($1.outputs["records"] ?? 0) }
        for (indexer, location) in zip(indexers, [sqlite, postgres]) {
            try await indexer.stored.wait("every record stored", timeout: .seconds(90)) { $0 >= stored }
            let store = try Store.open(location, logger: .marqueeTest)
            let ids = try await store.engine.read("SELECT movie_id FROM movie_details ORDER BY movie_id", [])
            let storedIDs = ids.compactMap { row -> Int64? in
                if case .int(let id)? = row.first { return id }
                return nil
            }
            #expect(storedIDs == expected.sorted(), "\(location.connectionString.prefix(8))")
            await store.close()
        }
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
        for indexer in indexers { await indexer.stop() }
    }
}

/// A child's exit status, set once it exits.
final class ExitBox: Sendable {
    private let value = Mutex<Int32?>(nil)
    func set(_ status: Int32) { self.value.withLock { $0 = status } }
    var status: Int32? { self.value.withLock { $0 } }
}
