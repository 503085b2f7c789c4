import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `marquee job`: a crawl run by the fetch worker and the indexer as processes, enqueued with `marquee enqueue`,
/// followed through its lineage and dead letters; and the trace id on every log line of its jobs.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct JobCLITests {
    @Test func aCrawlShowsAsATreeWithItsDeadLetterAndItsTraceIDIsOnEveryLineOfItsJobs() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: [
            "--seed", "12", "--movies", "100", "--tmdb-key", "tmdb-key-12",
        ])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqj", fetchTiers: 1, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-job")).db"
        defer { removeSQLiteFiles(path) }
        let location = try StoreLocation(parsing: "sqlite:\(path)")
        let lines = Mutex<[String]>([])
        let (fetcher, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: ["TMDB_API_KEY": "tmdb-key-12", "MARQUEE_LOG_LEVEL": "debug"]
        ) { line in lines.withLock { $0.append(line) } }
        let indexer = try await IndexWorker.start(
            topics: records,
            group: TestEnvironment.uniqueName("index"),
            store: location
        )

        // A list page with its 20 details, and a movie the upstream does not have (dead-lettered, permanent).
        let kafka = ["--brokers", TestEnvironment.brokers, "--topic-prefix", prefix]
        let listRun = try await runMarquee(
            ["enqueue", "tmdb-list", "popular", "--pages", "1", "--language", "ko-KR", "--details"] + kafka
        )
        let missingRun = try await runMarquee(["enqueue", "tmdb-movie", "999999999", "--language", "ko-KR"] + kafka)
        #expect(listRun.status == 0 && missingRun.status == 0, "\(listRun.standardError) \(missingRun.standardError)")
        let list = try #require(listRun.standardOutput.split(separator: "\n").first.map(String.init))
        let missing = try #require(missingRun.standardOutput.split(separator: "\n").first.map(String.init))

        // The dead letter, and every job's outcome in the store.
        let letter = try #require(try await read(1, from: fetch.dlq).first)
        let letterID = "fetch/\(letter.partition)/\(letter.offset)"
        #expect(try envelope(of: letter).id.rawValue == missing)
        let store = try Store.open(location, logger: .marqueeTest)
        try await eventually("every job of both crawls has an outcome in the store") {
            (try? await store.lineageProgress(roots: [JobID(rawValue: list), JobID(rawValue: missing)]).isComplete)
                ?? false
        }
        await store.close()

        let storeFlags = ["--store", "sqlite:\(path)"]
        // The list's tree: the root, then its 20 details under it, all done.
        let tree = try await runMarquee(["job", list] + storeFlags + kafka)
        #expect(tree.status == 0, "\(tree.standardError)")
        let treeLines = tree.standardOutput.split(separator: "\n").map(String.init)
        let rootLine = try #require(treeLines.first { $0.hasPrefix(list) }, "\(tree.standardOutput)")
        #expect(
            rootLine.contains("◀") && rootLine.contains("tmdb.list") && rootLine.contains("fetch")
                && rootLine.contains("done")
        )
        let childLines = treeLines.filter { $0.hasPrefix("├── ") || $0.hasPrefix("└── ") }
        #expect(childLines.count == 20, "\(tree.standardOutput)")
        #expect(childLines.allSatisfy { $0.contains("tmdb.movie") && $0.contains("done") && $0.contains("attempt 1") })
        #expect(childLines.last?.hasPrefix("└── ") == true && childLines.dropLast().allSatisfy { $0.hasPrefix("├── ") })
        #expect(treeLines.contains("21 jobs: 21 done; times in UTC"), "\(tree.standardOutput)")

        // As JSON: the same tree, with every field.
        let json = try await runMarquee(["job", list, "--json"] + storeFlags + kafka)
        #expect(json.status == 0, "\(json.standardError)")
        let document = object(try JSONValue.parse(Array(json.standardOutput.utf8)))
        #expect(
            document["job_id"] == .string(list) && document["root_id"] == .string(list)
                && document["found"] == .bool(true)
        )
        #expect(document["jobs_in_store"] == .integer(21) && document["dead_letters_read"] == .bool(true))
        guard case .array(let tops)? = document["tree"], let top = tops.first.map(object) else {
            Issue.record("no tree: \(json.standardOutput)")
            return
        }
        #expect(tops.count == 1)
        #expect(
            top["kind"] == .string("tmdb.list") && top["outcome"] == .string("done") && top["attempts"] == .integer(1)
        )
        #expect(top["requested"] == .bool(true) && top["parent_id"] == .null && top["dead_letters"] == .array([]))
        guard case .array(let children)? = top["children"] else {
            Issue.record("no children")
            return
        }
        #expect(children.count == 20)
        let child = object(try #require(children.first))
        for key in ["job_id", "kind", "stage", "outcome", "attempts", "first_at", "last_at", "source", "dead_letters"] {
            #expect(child[key] != nil, "\(key)")
        }
        #expect(child["parent_id"] == .string(list) && child["stage"] == .string("fetch"))
        guard case .string(let childID)? = child["job_id"], case .string(let first)? = child["first_at"] else {
            Issue.record("a child without its id or time")
            return
        }
        #expect(first.hasSuffix("Z"))

        // Asked about a child: the same tree, the child marked.
        let fromChild = try await runMarquee(["job", childID] + storeFlags + kafka)
        #expect(fromChild.status == 0, "\(fromChild.standardError)")
        #expect(fromChild.standardOutput.contains("root \(list)"))
        #expect(fromChild.standardOutput.split(separator: "\n").contains { $0.contains(childID + " ◀") })

        // The job that dead-lettered: its letter's address, as `marquee dlq show` takes it.
        let dead = try await runMarquee(["job", missing] + storeFlags + kafka)
        #expect(dead.status == 0, "\(dead.standardError)")
        #expect(
            dead.standardOutput.hasPrefix("job \(missing): dead-lettered (tmdb.movie, fetch), dead letter \(letterID)"),
            "\(dead.standardOutput)"
        )
        #expect(dead.standardOutput.contains("dlq \(letterID)") && dead.standardOutput.contains("permanent: "))
        let deadJSON = object(
            try JSONValue.parse(
                Array(try await runMarquee(["job", missing, "--json"] + storeFlags + kafka).standardOutput.utf8)
            )
        )
        guard case .array(let deadTops)? = deadJSON["tree"],
            case .array(let letters)? = deadTops.first.map(object)?["dead_letters"]
        else {
            Issue.record("no dead letters in the JSON")
            return
        }
        #expect(letters.first.map(object)?["id"] == .string(letterID))
        #expect(letters.first.map(object)?["error_kind"] == .string("permanent"))

        // Without the dead-letter topics, and with no broker answering: the store's lineage still shows.
        let noDLQ = try await runMarquee(["job", missing, "--no-dlq"] + storeFlags + kafka)
        #expect(noDLQ.status == 0 && !noDLQ.standardOutput.contains("dlq \(letterID)"))
        #expect(noDLQ.standardOutput.contains("dead-letter topics not read (--no-dlq)"))
        let unreachable = ["--brokers", "127.0.0.1:1", "--timeout", "2", "--topic-prefix", prefix]
        let brokerDown = try await runMarquee(["job", list] + storeFlags + unreachable)
        #expect(brokerDown.status == 1, "\(brokerDown.standardError)")
        #expect(brokerDown.standardOutput.contains("21 jobs: 21 done"))
        #expect(brokerDown.standardOutput.contains("the dead-letter topics could not be read"))

        // An id nobody knows.
        let unknown = JobID.make().rawValue
        let notFound = try await runMarquee(["job", unknown] + storeFlags + kafka)
        #expect(notFound.status == 65 && notFound.standardOutput.isEmpty)
        #expect(notFound.standardError.contains("no job \(unknown) in the store or the dead-letter topics"))
        #expect(try await runMarquee(["job", unknown] + storeFlags + unreachable).status == 69)
        #expect(try await runMarquee(["job", "not a job id"] + storeFlags + kafka).status == 64)

        // Every line the fetch worker wrote about a job of the list's crawl carries the trace id `marquee enqueue`
        // started for it; the other crawl's lines carry their own.
        let rootMessage = try #require(
            try await read(1, from: fetch.main) { (try? envelope(of: $0).id.rawValue) == list }.first
        )
        let traceID = try #require(try envelope(of: rootMessage).traceID, "marquee enqueue starts a trace")
        let missingTrace = try #require(try envelope(of: letter).traceID)
        #expect(traceID != missingTrace)
        let crawlIDs = Set(
            [list] + children.compactMap { if case .string(let id)? = object($0)["job_id"] { id } else { nil } }
        )
        #expect(crawlIDs.count == 21)
        fetcher.signal(SIGTERM)
        #expect(await fetcher.waitForExit() == 0)
        await indexer.stop()
        var jobLines = 0
        var loggedJobs: Set<String> = []
        for line in lines.withLock({ $0 }) {
            guard line.hasPrefix("{"), case .object(let entry)? = try? JSONValue.parse(Array(line.utf8)),
                case .string(let id)? = entry["marquee.job.id"]
            else { continue }
            if crawlIDs.contains(id) {
                jobLines += 1
                loggedJobs.insert(id)
                #expect(entry["trace_id"] == .string(traceID), "\(line)")
            } else if id == missing {
                #expect(entry["trace_id"] == .string(missingTrace), "\(line)")
            }
        }
        #expect(loggedJobs == crawlIDs, "each job of the crawl logged at least its 'job done' line at debug")
        #expect(jobLines >= 21)
    }
}

extension JobCLITests {
    /// On PostgreSQL, from rows as the indexer writes them: a retried job and a dead-lettered one among a root's
    /// children, a grandchild, and a spawned job with no outcome yet.
    @Test func aTreeOnPostgreSQLWithRetriedPendingAndDeadLetteredJobs() async throws {
        let location = try await freshPostgresDatabase()
        let store = try Store.open(location, logger: .marqueeTest)
        _ = try await store.migrate()
        let root = Envelope.root(traceparent: TraceContext.make())
        let (retried, dead, pending) = (root.child(), root.child(), root.child())
        let grandchild = retried.child()
        func outcome(
            _ envelope: Envelope,
            _ outcome: JobOutcome.Outcome,
            spawned: [Envelope] = [],
            at time: Int64
        ) -> Record {
            JobOutcome(
                envelope: envelope,
                stage: "fetch",
                kind: spawned.isEmpty ? "tmdb.movie" : "tmdb.list",
                outcome: outcome,
                outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count],
                spawned: spawned.map(\.id),
                source: "marquee.fetch/0/\(time)",
                finishedAt: time
            ).record
        }
        let start = Int64(JobID.nowMilliseconds())
        _ = try await store.write([
            outcome(root, .done, spawned: [retried, dead, pending], at: start),
            outcome(retried, .retried(tier: 2, error: "HTTP 503"), spawned: [grandchild], at: start + 4_000),
            outcome(dead, .deadLettered(.permanent, error: "HTTP 404"), at: start + 1_000),
            outcome(grandchild, .done, at: start + 2_000),
        ])
        await store.close()

        let flags = ["--no-dlq", "--store", location.connectionString]
        let run = try await runMarquee(["job", grandchild.id.rawValue] + flags)
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "job \(grandchild.id): done (tmdb.movie, fetch)")
        #expect(lines.contains("root \(root.id)"))
        let tree = lines.filter {
            $0.hasPrefix(root.id.rawValue) || $0.hasPrefix("├── ") || $0.hasPrefix("└── ") || $0.hasPrefix("│   ")
        }
        #expect(tree.count == 5, "\(run.standardOutput)")
        guard tree.count == 5 else { return }
        #expect(tree[0].hasPrefix(root.id.rawValue) && tree[0].contains("tmdb.list"))
        #expect(
            tree[1].hasPrefix("├── \(retried.id) ") && tree[1].contains("retried")
                && tree[1].contains("transient: HTTP 503")
        )
        #expect(tree[2].hasPrefix("│   └── \(grandchild.id) ◀") && tree[2].contains("done"))
        #expect(
            tree[3].hasPrefix("├── \(dead.id) ") && tree[3].contains("dead-lettered")
                && tree[3].contains("permanent: HTTP 404")
        )
        #expect(tree[4].hasPrefix("└── \(pending.id) ") && tree[4].contains("pending"))
        #expect(lines.contains("5 jobs: 2 done, 1 retried, 1 dead-lettered, 1 pending; times in UTC"))
        #expect(lines.last == "dead-letter topics not read (--no-dlq)")

        let json = object(
            try JSONValue.parse(
                Array(try await runMarquee(["job", root.id.rawValue, "--json"] + flags).standardOutput.utf8)
            )
        )
        #expect(json["jobs_in_store"] == .integer(4) && json["dead_letters_read"] == .null)
        #expect(
            json["counts"]
                == .object([
                    "done": .integer(2), "retried": .integer(1), "dead-lettered": .integer(1), "pending": .integer(1),
                ])
        )

        let unknown = try await runMarquee(["job", JobID.make().rawValue] + flags)
        #expect(unknown.status == 65 && unknown.standardError.contains("in the store"))
    }
}

/// Polls `condition` every 200 ms until it holds; fails the test past `timeout`.
private func eventually(
    _ what: String,
    timeout: Duration = .seconds(120),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("not within \(timeout): \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(200))
    }
}

private func object(_ value: JSONValue) -> JSONObject {
    if case .object(let object) = value { return object }
    return JSONObject()
}
