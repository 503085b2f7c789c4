import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// The pipeline run with recognisable fake API keys, upstream faults on (so jobs retry and dead-letter with
/// error texts that name URLs), every process at debug level: no key appears in any log line, Kafka header or
/// payload, metric, store row, or CLI output.
@Suite(.serialized, .timeLimit(.minutes(6)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct SecretsTests {
    @Test func noKeyAppearsInLogsHeadersMetricsStoreOrOutput() async throws {
        let tag = String(TestEnvironment.uniqueName("k").suffix(8))
        let keys = ["tmdbSECRET\(tag)key", "koficSECRET\(tag)key", "kakaoSECRET\(tag)key"]
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--movies", "300", "--books", "100", "--tmdb-key", keys[0], "--kofic-key", keys[1], "--kakao-key", keys[2],
            "--fault-5xx", "0.35", "--fault-malformed", "0.03",
        ])
        defer { emulator.terminate() }

        let prefix = TestEnvironment.uniqueName("mqs") + "."
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("secrets"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("marquee.db").path
        let groups = ["fetch", "images", "records"].map { ($0, TestEnvironment.uniqueName("secrets-\($0)")) }
        var common: [String: String] = [
            "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix,
            "MARQUEE_RETRY_DELAYS": "100ms,200ms",
            "MARQUEE_TOPIC_PARTITIONS": "2", "MARQUEE_SESSION_TIMEOUT": "6s", "MARQUEE_SHUTDOWN_TIMEOUT": "5s",
            "MARQUEE_LOG_LEVEL": "debug", "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0",
            "MARQUEE_STORE": "sqlite:\(database)",
            "MARQUEE_IMAGE_STORE": "file://\(folder.path)/images", "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1",
            "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
            "MARQUEE_FETCH_RATE_LIMITS": "tmdb=500,kofic=500,kakao=500,openlibrary=500",
            "TMDB_API_KEY": keys[0], "KOFIC_API_KEY": keys[1], "KAKAO_REST_API_KEY": keys[2],
            "TMDB_BASE_URL": emulator.tmdbBaseURL, "TMDB_IMAGE_BASE_URL": emulator.tmdbImageBaseURL,
            "KOFIC_BASE_URL": emulator.koficBaseURL, "KAKAO_BASE_URL": emulator.kakaoBaseURL,
            "OPENLIBRARY_BASE_URL": emulator.openLibraryBaseURL,
            "OPENLIBRARY_COVERS_BASE_URL": emulator.openLibraryCoversBaseURL,
        ]
        // The operator tools read the workers' groups from the same settings.
        for (stage, group) in groups { common["MARQUEE_GROUP_\(stage.uppercased())"] = group }
        var texts: [(String, String)] = []  // (where, text)
        func cli(_ arguments: [String]) async throws -> CommandRun {
            let run = try await runBuiltExecutable("marquee", arguments, environment: common.mapValues { $0 })
            texts.append(("marquee \(arguments.first ?? "")", run.standardOutput + run.standardError))
            return run
        }
        #expect(try await cli(["topics", "create"]).status == 0)

        // The three workers, every line they log kept.
        let lines = Mutex<[String]>([])
        var workers: [(ChildProcess, String)] = []
        for (program, stage) in [
            ("marquee-fetch", "fetch"), ("marquee-images", "images"), ("marquee-index", "records"),
        ] {
            let started = AsyncStream<String>.makeStream()
            let process = try ChildProcess(
                program,
                arguments: [],
                environment: common.merging(["MARQUEE_GROUP": groups.first { $0.0 == stage }!.1]) { $1 },
                readsStandardError: true
            ) { line in
                lines.withLock { $0.append(String(line)) }
                if line.contains("worker started\""),
                    let url = line.split(separator: "\"").first(where: {
                        $0.hasPrefix("http://") && $0.hasSuffix("/metrics")
                    })
                {
                    started.continuation.yield(String(url.dropLast("/metrics".count)))
                }
            }
            var iterator = started.stream.makeAsyncIterator()
            workers.append((process, try #require(await iterator.next(), "\(program) logs where its metrics are")))
        }

        // A crawl touching every source, and a movie that does not exist (dead-lettered with its URL in the error).
        let roots = folder.appendingPathComponent("roots.txt").path
        var rootIDs = ""
        for arguments in [
            ["tmdb-list", "popular", "--pages", "1-2", "--language", "ko-KR", "--details", "--reviews", "--images"],
            // Four genre lists besides: with 35 % 5xx on every draw, the two list pages alone once drew six 5xx in a
            // row (three attempts each) and TMDB answered no 200; eighteen draws make that about 1 run in 10^8.
            ["tmdb-genres", "--language", "ko-KR,en-US,ja-JP,fr-FR"],
            ["tmdb-movie", "2147483000"], ["kofic-daily", "--from", "2024-01-10", "--details", "--images"],
            ["openlibrary-search", "night", "--details", "--images"],
        ] {
            let run = try await cli(["enqueue"] + arguments)
            #expect(run.status == 0, "\(run.standardError)")
            rootIDs += run.standardOutput
        }
        #expect(FileManager.default.createFile(atPath: roots, contents: Data(rootIDs.utf8)))
        let drained = try await cli(["drain", "--roots", roots, "--max-wait", "4m", "--interval", "500ms"])
        #expect(drained.status == 0, "\(drained.standardOutput)\n\(drained.standardError)")
        // Its summary groups the dead letters by stage, kind, error kind and reason.
        #expect(
            drained.standardOutput.contains("dead letters (marquee dlq list shows them"),
            "\(drained.standardOutput)"
        )
        #expect(drained.standardOutput.contains("  fetch  tmdb.movie  "), "\(drained.standardOutput)")

        // What operators and dashboards read.
        var metrics: [String] = []
        for (_, base) in workers {
            metrics.append(try await httpGet(base + "/metrics").1)
            texts.append(("\(base)/metrics", metrics.last!))
            texts.append(("\(base)/readyz", try await httpGet(base + "/readyz").1))
        }
        // The workers' own figures: upstream statuses per source (faults included), image bytes in and out.
        #expect(
            metrics[0].contains(#"marquee_fetch_http_responses_total{source="tmdb",status="200"}"#),
            "\(metrics[0])"
        )
        // Every source the crawl touched is counted (with 35 % 5xx a source may have answered only errors).
        for source in ["kofic", "openlibrary"] {
            #expect(metrics[0].contains(#"marquee_fetch_http_responses_total{source="\#(source)","#), "\(source)")
        }
        #expect(metrics[0].contains(#"status="50"#), "the injected 5xx are counted")
        for direction in ["in", "out"] {
            let line = metrics[1].split(separator: "\n").first {
                $0.hasPrefix(#"marquee_images_bytes_total{direction="\#(direction)"}"#)
            }
            #expect(
                (line?.split(separator: " ").last.flatMap { Double($0) } ?? 0) > 10_000,
                "image bytes \(direction): \(line ?? "none")"
            )
        }
        // Every image was new to this crawl: downloaded in full, none revalidated.
        let full = metrics[1].split(separator: "\n").first {
            $0.hasPrefix(#"marquee_images_downloads_total{result="full"}"#)
        }
        #expect((full?.split(separator: " ").last.flatMap { Double($0) } ?? 0) > 0, "full downloads: \(full ?? "none")")
        #expect(!metrics[1].contains(#"result="not_modified""#), "no image was stored before")
        let addresses = zip(["fetch", "images", "records"], workers).map { "\($0)=\($1.1.dropFirst("http://".count))" }
        let status = try await runBuiltExecutable(
            "marquee",
            ["status", "--json"],
            environment: common.merging(["MARQUEE_WORKERS": addresses.joined(separator: ",")]) { $1 }.mapValues { $0 }
        )
        texts.append(("marquee status", status.standardOutput + status.standardError))
        _ = try await cli(["lag", "--json", "--samples", "1"])

        // Every record of every topic: headers and payloads.
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        let reader = try KafkaReader(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        var errorHeaders = 0
        var deadLetters = 0
        for topic in try await admin.listTopics().map(\.name) where topic.hasPrefix(prefix) {
            let ranges = try await admin.watermarks(topic: topic).mapValues { $0.start..<$0.end }
            for record in try await reader.read(ranges, timeout: .seconds(30)) {
                let headers = record.headers.map { "\($0.key)=\($0.stringValue ?? "")" }.joined(separator: "\n")
                texts.append(
                    (
                        "\(topic)/\(record.partition.partition)/\(record.offset)",
                        headers + "\n" + record.valueString + (record.keyString ?? "")
                    )
                )
                if record.headers.string(Envelope.Header.error) != nil { errorHeaders += 1 }
                if topic.hasSuffix(".dlq") { deadLetters += 1 }
            }
        }
        // The store's every byte (SQLite file and its write-ahead log).
        for suffix in ["", "-wal"] {
            if let bytes = FileManager.default.contents(atPath: database + suffix) {
                texts.append(("store\(suffix)", String(decoding: bytes, as: UTF8.self)))
            }
        }
        for (process, _) in workers {
            process.signal(SIGTERM)
            _ = await process.waitForExit()
        }
        texts.append(contentsOf: lines.withLock { $0 }.map { ("log", $0) })

        // The failure paths ran: retries and dead letters carry error texts; the fake keys were really used.
        #expect(errorHeaders > 5, "retries and dead letters carry marquee-error headers")
        #expect(deadLetters >= 1, "the missing movie was dead-lettered")
        let requests = try await emulator.stats()
        #expect("\(requests)".contains("200"), "the upstream answered with the keys")
        #expect(lines.withLock { $0.count } > 100)
        // The places scanned did hold the URLs the keys travel in — redacted.
        #expect(
            texts.contains { $0.1.contains("api_key=REDACTED") || $0.1.contains("key=REDACTED") },
            "redacted URLs were logged"
        )

        for key in keys {
            for (place, text) in texts where text.contains(key) {
                let line = text.split(separator: "\n").first { $0.contains(key) } ?? ""
                Issue.record("the key appears in \(place): \(line.prefix(300))")
            }
        }
    }
}
