import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.JSONSerialization

#if canImport(Glibc)
import Glibc
#endif

/// `marquee dlq` as a process against the real broker: dead letters the stage wrote (by hand with the stage's
/// headers, and for real by `marquee-fetch` against the emulator) listed, shown, replayed through a real worker,
/// and purged — while the dead-letter topics keep every record.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DLQCLITests {
    @Test func theAdminCommitsAGroupsOffsetsWithoutJoiningIt() async throws {
        try await withTestTopic(partitions: 2) { topic in
            let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
            let group = TestEnvironment.uniqueName("dlq-reader")
            let zero = KafkaTopicPartition(topic: topic, partition: 0)
            let one = KafkaTopicPartition(topic: topic, partition: 1)
            #expect(try await admin.committedOffsets(group: group, topics: [topic]) == [zero: nil, one: nil])
            try await admin.commitOffsets(group: group, [zero: 0, one: 0])
            try await admin.commitOffsets(group: group, [zero: 3])
            #expect(try await admin.committedOffsets(group: group, topics: [topic]) == [zero: 3, one: 0])
        }
    }

    @Test func listShowFilterAndPurgeHideLettersWithoutDeletingThem() async throws {
        let prefix = TestEnvironment.uniqueName("mqdlq") + "."
        let stages = ["fetch", "images", "records"].map { StageTopics(stage: $0, prefix: prefix, tiers: 0) }
        let (fetch, records) = (stages[0], stages[2])
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        // One partition: the order of the letters is the order of sending, which purging depends on.
        _ = try await StageTopics.createAll(stages, partitions: 1, admin: admin)

        // Four letters of the fetch stage and one of the records stage, with the headers the stage writes.
        let missing = FetchJob.tmdbMovie(id: 999_999_999, language: "ko-KR", follow: .none)
        let list = FetchJob.tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: .none)
        let other = FetchJob.tmdbMovie(id: 424_242, language: "en-US", follow: .none)
        let poison: [UInt8] = [0xFF, 0x00, UInt8(ascii: "a")]
        let record = Record(kind: .movie, key: "tmdb:movie:1", fetchedAt: 1, data: ["id": .integer(1)])
        func routed(_ attempt: Int, _ kind: Envelope.ErrorKind, _ error: String, origin: String) -> [KafkaHeader] {
            let root = JobID.make()
            return Envelope(
                id: JobID.make(),
                root: root,
                parent: root,
                attempt: attempt,
                origin: origin,
                error: error,
                errorKind: kind
            )
            .kafkaHeaders
        }
        try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in
            try await producer.deliver([
                KafkaProducerMessage(
                    topic: fetch.dlq,
                    key: Array(missing.dedupeKey.utf8),
                    value: missing.encoded(),
                    headers: routed(
                        1,
                        .permanent,
                        "HTTP 404: The resource you requested could not be found.",
                        origin: "\(fetch.main)/0/0"
                    )
                ),
                KafkaProducerMessage(
                    topic: fetch.dlq,
                    key: Array(list.dedupeKey.utf8),
                    value: list.encoded(),
                    headers: routed(4, .transient, "HTTP 503 Service Unavailable", origin: "\(fetch.main)/0/1")
                ),
                KafkaProducerMessage(
                    topic: fetch.dlq,
                    key: nil,
                    value: poison,
                    headers: [
                        KafkaHeader(key: Envelope.Header.origin, value: "\(fetch.main)/0/2"),
                        KafkaHeader(key: Envelope.Header.error, value: "header marquee-id: required"),
                        KafkaHeader(key: Envelope.Header.errorKind, value: "poison"),
                    ]
                ),
                KafkaProducerMessage(
                    topic: fetch.dlq,
                    key: Array(other.dedupeKey.utf8),
                    value: other.encoded(),
                    headers: routed(1, .permanent, "HTTP 404: not here either", origin: "\(fetch.main)/0/3")
                ),
                KafkaProducerMessage(
                    topic: records.dlq,
                    key: Array("tmdb:movie:1".utf8),
                    value: record.encoded(),
                    headers: routed(1, .permanent, "field 'data.title': required", origin: "\(records.main)/0/0")
                ),
            ])
        }
        let before = try await dlqContents(stages)
        #expect(before.count == 5)
        let group = TestEnvironment.uniqueName("dlq-reader")
        func dlq(_ arguments: [String]) async throws -> CommandRun {
            try await runMarquee(
                ["dlq"] + arguments + [
                    "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix, "--reader-group", group,
                ]
            )
        }

        // list --json: every fact of every letter, newest last.
        let listed = try await dlq(["list", "--json"])
        #expect(listed.status == 0, "\(listed.standardError)")
        let letters = try jsonLines(listed.standardOutput)
        #expect(
            letters.map { $0["id"] as? String } == ["fetch/0/0", "fetch/0/1", "fetch/0/2", "fetch/0/3", "records/0/0"]
        )
        #expect(letters.map { $0["kind"] as? String } == ["tmdb.movie", "tmdb.list", "unknown", "tmdb.movie", "movie"])
        #expect(
            letters.map { $0["error_kind"] as? String } == [
                "permanent", "transient", "poison", "permanent", "permanent",
            ]
        )
        #expect(letters.map { $0["attempt"] as? Int } == [1, 4, nil, 1, 1])
        #expect(letters.map { $0["poison"] as? Bool } == [false, false, true, false, false])
        #expect(letters[1]["error"] as? String == "HTTP 503 Service Unavailable")
        #expect(letters[1]["origin"] as? String == "\(fetch.main)/0/1")
        #expect(letters[0]["key"] as? String == missing.dedupeKey)
        #expect(letters[0]["topic"] as? String == fetch.dlq)
        #expect(
            letters.allSatisfy {
                ($0["age_seconds"] as? Int).map { $0 < 120 } == true && $0["purged"] as? Bool == false
            }
        )
        #expect(listed.standardError.contains("5 dead letters:"), "the summary goes to standard error with --json")

        // The table, with its summary per stage and error kind.
        let table = try await dlq(["list"])
        #expect(table.status == 0, "\(table.standardError)")
        let rows = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasPrefix("ID") == true && rows.first?.contains("ERROR KIND") == true)
        #expect(
            rows.contains {
                $0.hasPrefix("fetch/0/1") && $0.contains("tmdb.list") && $0.contains("transient")
                    && $0.contains("HTTP 503")
            }
        )
        #expect(table.standardOutput.contains("5 dead letters:"))
        #expect(
            rows.contains { $0.split(separator: " ", omittingEmptySubsequences: true) == ["fetch", "permanent", "2"] }
        )
        #expect(
            rows.contains {
                $0.split(separator: " ", omittingEmptySubsequences: true) == ["records", "permanent", "1"]
            }
        )

        // Filters.
        func ids(_ arguments: [String]) async throws -> [String] {
            let run = try await dlq(["list", "--json"] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
            return try jsonLines(run.standardOutput).compactMap { $0["id"] as? String }
        }
        #expect(try await ids(["--stage", "records"]) == ["records/0/0"])
        #expect(try await ids(["--error-kind", "poison,transient"]) == ["fetch/0/1", "fetch/0/2"])
        #expect(try await ids(["--kind", "tmdb.movie", "--grep", "COULD NOT"]) == ["fetch/0/0"])
        #expect(try await ids(["--since", "1h", "--stage", "fetch", "--stage", "records"]).count == 5)
        #expect(try await ids(["--until", "1h"]).isEmpty)
        #expect(try await ids(["--limit", "2"]) == ["fetch/0/3", "records/0/0"])

        // show: facts, headers, the payload pretty-printed; the raw bytes; poison escaped; bad ids exit 65.
        let shown = try await dlq(["show", "fetch/0/0"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(
            shown.standardOutput.contains("marquee-error: HTTP 404: The resource you requested could not be found.")
        )
        #expect(shown.standardOutput.contains("marquee-error-kind: permanent"))
        #expect(shown.standardOutput.contains("payload (\(missing.encoded().count) bytes, JSON):"))
        #expect(shown.standardOutput.contains("\n  \"kind\": \"tmdb.movie\""), "\(shown.standardOutput)")
        let raw = try await dlq(["show", "\(fetch.dlq)/0/0", "--raw"])
        #expect(raw.status == 0 && Array(raw.standardOutput.utf8) == missing.encoded())
        let poisonShown = try await dlq(["show", "fetch/0/2"])
        #expect(poisonShown.standardOutput.contains(#"\xff\x00a"#), "\(poisonShown.standardOutput)")
        #expect(try await dlq(["show", "fetch/0/99"]).status == 65)
        #expect(try await dlq(["show", "nope/0/1"]).status == 65)
        #expect(try await dlq(["show", "fetch/zero/1"]).status == 65)

        // Poison is refused without --include-poison: nothing sent, exit 1.
        let refused = try await dlq(["replay", "fetch/0/2"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("poison"), "\(refused.standardError)")
        #expect(try await dlqContents([fetch], main: true).isEmpty)

        // Purging the permanent fetch letters: fetch/0/0 is hidden; fetch/0/1 does not match and stops the
        // partition there, so fetch/0/3 cannot be hidden (exit 1, and it says so).
        let partial = try await dlq(["purge", "--stage", "fetch", "--error-kind", "permanent"])
        #expect(partial.status == 1)
        #expect(partial.standardOutput.contains("1 dead letter purged (fetch 1)"), "\(partial.standardOutput)")
        #expect(partial.standardError.contains("1 selected letter could not be hidden"), "\(partial.standardError)")
        #expect(try await ids([]) == ["fetch/0/1", "fetch/0/2", "fetch/0/3", "records/0/0"])
        let withPurged = try jsonLines(try await dlq(["list", "--json", "--all"]).standardOutput)
        #expect(withPurged.map { $0["purged"] as? Bool } == [true, false, false, false, false])
        #expect(try await dlq(["purge", "fetch/0/99"]).status == 65)

        // Replay by id, purged or not, at most one a second: three letters take two seconds at least.
        let clock = ContinuousClock()
        let started = clock.now
        let paced = try await dlq(["replay", "fetch/0/0", "records/0/0", "fetch/0/3", "--rate", "1"])
        #expect(clock.now - started >= .seconds(2))
        #expect(paced.status == 0, "\(paced.standardError)")
        #expect(
            paced.standardOutput.split(separator: "\n").map { $0.split(separator: " ")[0] } == [
                "fetch/0/0", "records/0/0", "fetch/0/3",
            ]
        )
        #expect(
            paced.standardError.contains("3 of 3 dead letters replayed to \(fetch.main) (2), \(records.main) (1)"),
            "\(paced.standardError)"
        )
        #expect(try await dlqContents([fetch], main: true).map(\.value) == [missing.encoded(), other.encoded()])
        #expect(try await dlqContents([records], main: true).map(\.value) == [record.encoded()])

        // Everything: nothing shows, --all shows every letter again, and the topics hold what they held.
        let dryPurge = try await dlq(["purge", "--all", "--dry-run"])
        #expect(
            dryPurge.status == 0 && dryPurge.standardOutput.contains("4 dead letters would be purged"),
            "\(dryPurge.standardOutput)"
        )
        #expect(try await ids([]).count == 4, "a dry run commits nothing")
        let purged = try await dlq(["purge", "--all"])
        #expect(purged.status == 0, "\(purged.standardError)")
        #expect(
            purged.standardOutput.contains("4 dead letters purged (fetch 3, records 1)"),
            "\(purged.standardOutput)"
        )
        let empty = try await dlq(["list"])
        #expect(empty.status == 0 && empty.standardOutput.contains("no dead letters"))
        #expect(empty.standardOutput.contains("5 purged not shown (--all shows them)"), "\(empty.standardOutput)")
        #expect(try await ids(["--all"]) == ["fetch/0/0", "fetch/0/1", "fetch/0/2", "fetch/0/3", "records/0/0"])
        #expect(try await dlqContents(stages) == before, "purging deleted nothing")
        for (stage, end) in zip(stages, [4, 0, 1] as [Int64]) {
            #expect(try await admin.watermarks(topic: stage.dlq).values.map(\.end) == [end], "\(stage.dlq)")
        }
        // The purge position is the reader group's committed offset.
        #expect(try await admin.committedOffsets(group: group, topics: [fetch.dlq]).values.first == 4)

        // Usage and an unreachable broker.
        #expect(try await dlq(["purge"]).status == 64)
        #expect(try await dlq(["replay"]).status == 64)
        #expect(try await dlq(["list", "--stage", "nope"]).status == 64)
        #expect(try await dlq(["list", "--since", "yesterday"]).status == 64)
        let unreachable = try await runMarquee(["dlq", "list", "--brokers", "127.0.0.1:1", "--timeout", "2"])
        #expect(unreachable.status == 69, "\(unreachable.standardError)")
        #expect(unreachable.standardError.hasPrefix("marquee: "))
    }

    /// A job dead-lettered for real by `marquee-fetch` (the upstream answered 5xx until the tiers ran out) is
    /// replayed once the upstream is fixed, and comes through the same worker: its records arrive, under the
    /// same job id.
    @Test func replayBringsAFixedJobThrough() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "8", "--movies", "100", "--tmdb-key", "tmdb-key-dlq",
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqdr", fetchTiers: 3, recordsTiers: 0)
        let (worker, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: ["TMDB_API_KEY": "tmdb-key-dlq"]
        )
        do {
            try await Self.replayScenario(emulator: emulator, prefix: prefix, fetch: fetch, records: records)
        } catch {
            worker.signal(SIGTERM)
            _ = await worker.waitForExit()
            throw error
        }
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }

    static func replayScenario(
        emulator: UpstreamEmulatorProcess,
        prefix: String,
        fetch: StageTopics,
        records: StageTopics
    ) async throws {
        // A detail that does not exist: permanent. Then a list while the upstream fails every call: transient,
        // through tiers 1 to 3, then the DLQ.
        try await enqueue(.tmdbMovie(id: 999_999_999, language: "ko-KR", follow: .none), to: fetch)
        _ = try await read(1, from: fetch.dlq)
        try await emulator.control(["fault5xx": 1.0])
        let job = FetchJob.tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: .none)
        let envelope = try await enqueue(job, to: fetch)
        _ = try await read(2, from: fetch.dlq)
        try await emulator.control(["fault5xx": 0.0])
        let before = try await dlqContents([fetch])

        func dlq(_ arguments: [String]) async throws -> CommandRun {
            try await runMarquee(
                ["dlq"] + arguments + ["--brokers", TestEnvironment.brokers, "--topic-prefix", prefix]
            )
        }
        let listed = try jsonLines(try await dlq(["list", "--json", "--stage", "fetch"]).standardOutput)
        #expect(listed.count == 2)
        let permanent = try #require(listed.first { $0["error_kind"] as? String == "permanent" })
        #expect(permanent["kind"] as? String == "tmdb.movie")
        #expect((permanent["error"] as? String)?.contains("could not be found") == true, "\(permanent)")
        let transient = try #require(listed.first { $0["error_kind"] as? String == "transient" })
        #expect(transient["kind"] as? String == "tmdb.list")
        #expect(transient["attempt"] as? Int == 4, "the first run and three tiers")
        #expect(transient["job_id"] as? String == envelope.id.rawValue)
        #expect((transient["origin"] as? String)?.hasPrefix("\(fetch.main)/") == true)
        let id = try #require(transient["id"] as? String)

        // The 404 stays dead: purge it (it came first, so nothing stands before it in its partition).
        let purged = try await dlq(["purge", "--error-kind", "permanent"])
        #expect(purged.status == 0, "\(purged.standardError)")
        #expect(purged.standardOutput.contains("1 dead letter purged (fetch 1)"), "\(purged.standardOutput)")

        // A dry run says what it would send and sends nothing.
        let dry = try await dlq(["replay", "--error-kind", "transient", "--dry-run"])
        #expect(dry.status == 0, "\(dry.standardError)")
        #expect(
            dry.standardOutput.contains("1 dead letter would be replayed (dry run) to \(fetch.main) (1)"),
            "\(dry.standardOutput)"
        )
        #expect(dry.standardOutput.contains(id))

        // The replay, with --purge: the job runs again on the worker and its 40 records arrive.
        let replay = try await dlq(["replay", "--error-kind", "transient", "--purge", "--rate", "5"])
        #expect(replay.status == 0, "\(replay.standardError)")
        #expect(replay.standardOutput.hasPrefix("\(id) -> \(fetch.main)/"), "\(replay.standardOutput)")
        #expect(replay.standardError.contains("1 of 1 dead letter replayed"), "\(replay.standardError)")
        #expect(replay.standardOutput.contains("1 dead letter purged (fetch 1)"), "\(replay.standardOutput)")
        let produced = try await read(40, from: records.main, including: isEntityRecord)
        #expect(Set(produced.map(\.keyString)).count == 40)
        let outcome = try await read(1, from: records.main) { message in
            guard message.keyString == "job.outcome:\(envelope.id)", let record = try? Record.decode(message.value)
            else { return false }
            return (try? JobOutcome.decode(record))?.outcome == .done
        }
        #expect(outcome.count == 1, "the replayed job kept its id: lineage holds")

        // The main topic holds the two enqueued jobs and the one replay: fresh attempt, where it came from.
        let main = try await dlqContents([fetch], main: true)
        #expect(main.count == 3, "the dry run sent nothing")
        let replayed = try #require(main.first { $0.headers.string(Envelope.Header.replayedFrom) != nil })
        let parts = id.split(separator: "/")
        #expect(replayed.headers.string(Envelope.Header.replayedFrom) == "\(fetch.dlq)/\(parts[1])/\(parts[2])")
        #expect(replayed.headers.string(Envelope.Header.attempt) == "1")
        #expect(replayed.headers.string(Envelope.Header.id) == envelope.id.rawValue)
        #expect(replayed.headers.string(Envelope.Header.root) == envelope.root.rawValue)
        for dropped in [
            Envelope.Header.error, Envelope.Header.errorKind, Envelope.Header.origin, Envelope.Header.notBefore,
        ] {
            #expect(replayed.headers.string(dropped) == nil, "\(dropped)")
        }
        #expect(replayed.value == job.encoded() && replayed.keyString == job.dedupeKey)

        // Both letters are purged now, and both are still in the topic.
        #expect(try jsonLines(try await dlq(["list", "--json"]).standardOutput).isEmpty)
        let remaining = try jsonLines(try await dlq(["list", "--json", "--all"]).standardOutput)
        #expect(remaining.map { $0["purged"] as? Bool } == [true, true])
        #expect(try await dlqContents([fetch]) == before, "replay and purge deleted nothing")
    }
}

/// Every record of the stages' dead-letter topics (or main topics), read without a group.
func dlqContents(_ stages: [StageTopics], main: Bool = false) async throws -> [KafkaRecord] {
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    let reader = try KafkaReader(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    var ranges: [KafkaTopicPartition: Range<Int64>] = [:]
    for stage in stages {
        for (partition, watermarks) in try await admin.watermarks(topic: main ? stage.main : stage.dlq) {
            ranges[partition] = watermarks.start..<Int64.max
        }
    }
    return try await reader.read(ranges)
}

/// The JSON objects of JSON lines.
func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
        try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            "not a JSON object: \(line)"
        )
    }
}
