import Hummingbird
import HummingbirdTesting
import Logging
import MarqueeCore
import MarqueeDashboard
import MarqueeImageStore
@_spi(Testing) import MarqueeImaging
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import NIOCore
import Testing

import struct Foundation.Date
import class Foundation.FileManager
import class Foundation.NSString

#if canImport(Glibc)
import Glibc
#endif

/// Every page and JSON endpoint of the dashboard against the real broker, a real store and a real
/// `marquee-index` worker, with known contents (``DashboardPipeline``).
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DashboardHandlerTests {
    @Test func everyPageAndEndpointShowsTheKnownContents() async throws {
        let pipeline = try await DashboardPipeline.start()
        defer { pipeline.removeFiles() }
        let dashboard = try Dashboard(configuration: pipeline.configuration, logger: .marqueeTest)
        // Sample until the worker joined its group and says it is ready (it has no event to await from here).
        try await pipeline.sampleUntilReady(dashboard)
        await dashboard.sample()

        let app = Application(router: dashboard.router())
        try await app.test(.router) { client in
            // /api/lag: the same report as `marquee lag --json`, plus the history behind the charts.
            let lag = try await client.json("/api/lag")
            let stages = try #require(lag["stages"]?.list)
            #expect(stages.compactMap { $0["stage"]?.text } == ["fetch", "images", "records"])
            let fetch = try #require(stages.first { $0["stage"]?.text == "fetch" })
            #expect(fetch["status"]?.text == "STOPPED", "no member in the fetch group")
            #expect(fetch["totals"]?["lag"]?.int == 10, "5 on the main topic, 5 on tier 1")
            #expect(fetch["totals"]?["lag_due"]?.int == 7, "5 on the main topic, 2 overdue on tier 1")
            #expect(fetch["totals"]?["overdue"]?.int == 2)
            #expect(fetch["totals"]?["not_yet_due"]?.int == 3)
            let records = try #require(stages.first { $0["stage"]?.text == "records" })
            #expect(records["status"]?.text == "OK", "\(records)")
            #expect(records["members"]?.int == 1)
            let history = try #require(lag["history"]?["fetch"]?.list)
            #expect(history.count == lag["rounds"]?.int.map(Int.init), "one point per round")
            #expect(history.last?["lag"]?.int == 10)

            // /api/workers: the real indexer ready; an address where nothing listens unreachable, with why.
            let workers = try #require(try await client.json("/api/workers")["workers"]?.list)
            let indexer = try #require(workers.first { $0["address"]?.text == pipeline.workerAddress })
            #expect(indexer["state"]?.text == "ready")
            #expect(indexer["figures"]?["in_flight"]?.double == 0)
            #expect(indexer["restarts"]?.int == 0)
            let missing = try #require(workers.first { $0["address"]?.text == "127.0.0.1:1" })
            #expect(missing["state"]?.text == "unreachable")
            let reason = missing["reason"]?.text ?? ""
            #expect(reason.contains("onnect"), "\(missing)")

            // /api/dlq: counts by stage, kind and error kind; the latest, newest first, with their errors.
            let dlq = try await client.json("/api/dlq")
            #expect(dlq["total"]?.int == 3)
            #expect(dlq["by_stage"] == .object(["fetch": .integer(2), "images": .integer(0), "records": .integer(1)]))
            let counts = try #require(dlq["counts"]?.list)
            #expect(
                counts == [
                    .object([
                        "stage": .string("fetch"), "kind": .string("tmdb.movie"), "error_kind": .string("permanent"),
                        "count": .integer(2),
                    ]),
                    .object([
                        "stage": .string("records"), "kind": .string("unknown"), "error_kind": .string("poison"),
                        "count": .integer(1),
                    ]),
                ]
            )
            let latest = try #require(dlq["latest"]?.list)
            #expect(latest.count == 3)
            #expect(latest.contains { $0["error"]?.text == "TMDB answered 404 for movie 902" })

            // /api/dlq/<id> and /dlq/<id>: headers and payload of one letter.
            let letter = try await client.json("/api/dlq/fetch/0/1")
            #expect(letter["error"]?.text == "TMDB answered 404 for movie 902")
            #expect(letter["payload"]?["id"]?.int == 902)
            #expect(letter["headers"]?.list?.contains { $0["name"]?.text == "marquee-error-kind" } == true)
            let poison = try await client.json("/api/dlq/records/0/0")
            #expect(poison["payload_base64"]?.text != nil, "bytes that are not UTF-8")
            let page = try await client.page("/dlq/fetch/0/1")
            #expect(page.status == .ok)
            #expect(
                page.html.contains(
                    "<dd class=\"error-text\" data-test=\"letter-error\">TMDB answered 404 for movie 902</dd>"
                )
            )
            #expect(page.html.contains("&quot;id&quot;: 902"), "the payload, indented JSON, escaped")
            #expect(page.html.contains("<th scope=\"row\">marquee-error-kind</th><td class=\"mono\">permanent</td>"))
            let poisonPage = try await client.page("/dlq/records/0/0")
            #expect(poisonPage.html.contains("binary, 5 bytes"), "\(poisonPage.html)")
            let missingPage = try await client.page("/dlq/fetch/0/99")
            #expect(missingPage.status == .notFound)
            let missingLetter = try await client.page("/api/dlq/fetch/0/99")
            #expect(missingLetter.status == .notFound)

            // /api/store: counts and the latest items with their thumbnails, served from the image store.
            let store = try await client.json("/api/store")
            #expect(store["counts"]?["movies"]?.int == 3)
            #expect(store["counts"]?["books"]?.int == 2)
            #expect(store["counts"]?["images"]?.int == 1)
            #expect(store["counts"]?["box_office_charts"]?.int == 0)
            let items = try #require(store["latest"]?.list)
            #expect(items.count == 5)
            #expect(items.first?["key"]?.text == "openlibrary:work:OL2W", "newest first")
            let poster = try #require(items.first { $0["key"]?.text == "tmdb:movie:1" })
            #expect(poster["thumbnail"]?.text == "/images/\(pipeline.posterKey.rawValue)")
            let image = try await client.execute(uri: "/images/\(pipeline.posterKey.rawValue)", method: .get) { $0 }
            #expect(image.status == .ok)
            #expect(image.headers[.contentType] == "image/webp")
            #expect(Array(buffer: image.body) == pipeline.posterBytes)

            // The page: every panel with the same numbers.
            let overview = try await client.page("/")
            #expect(overview.status == .ok)
            let html = overview.html
            for expected in [
                "data-test=\"fetch-status\">STOPPED<", "data-test=\"fetch-lag\">10<", "data-test=\"fetch-due\">7<",
                "data-test=\"fetch-tier-1-overdue\">2<", "data-test=\"fetch-tier-1-not-due\">3<",
                "data-test=\"records-status\">OK<", "id=\"chart-fetch-messages\"", "id=\"chart-fetch-seconds\"",
                "data-test=\"worker-\(pipeline.workerAddress)-state\">ready<",
                "data-test=\"worker-127.0.0.1:1-state\">unreachable<",
                "data-test=\"dlq-total\">3<", "data-test=\"dlq-fetch\">2<", "data-test=\"dlq-records\">1<",
                "data-test=\"dlq-count-fetch-tmdb.movie-permanent\">2<", "href=\"/dlq/fetch/0/1\"",
                "TMDB answered 404 for movie 902",
                "data-test=\"store-movies\">3<", "data-test=\"store-books\">2<", "data-test=\"store-images\">1<",
                "<img src=\"/images/\(pipeline.posterKey.rawValue)\" alt=\"poster of Movie 1\"",
            ] {
                #expect(html.contains(expected), "\(expected)")
            }
        }

        // Letters that arrive later are counted at the next sample; a purge (the reader group's position moved by
        // `marquee dlq purge`) hides the letters before it.
        var envelope = Envelope.root()
        envelope.error = "TMDB answered 404 for movie 903"
        envelope.errorKind = .permanent
        let late = KafkaProducerMessage(
            topic: pipeline.prefix + "fetch.dlq",
            key: nil,
            value: Array(#"{"v":1,"kind":"tmdb.movie","id":903}"#.utf8),
            headers: envelope.kafkaHeaders
        )
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in try await producer.send([late]) }
        await dashboard.sample()
        try await app.test(.router) { client in
            let dlq = try await client.json("/api/dlq")
            #expect(dlq["total"]?.int == 4)
            #expect(dlq["by_stage"]?["fetch"]?.int == 3)
            #expect(dlq["latest"]?.list?.first?["error"]?.text == "TMDB answered 404 for movie 903", "newest first")
        }
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        try await admin.commitOffsets(
            group: pipeline.readerGroup,
            [KafkaTopicPartition(topic: pipeline.prefix + "fetch.dlq", partition: 0): 2]
        )
        await dashboard.sample()
        try await app.test(.router) { client in
            let dlq = try await client.json("/api/dlq")
            #expect(dlq["total"]?.int == 2, "\(dlq)")
            #expect(dlq["by_stage"]?["fetch"]?.int == 1)
            #expect(dlq["purged"]?.int == 2)
            let overview = try await client.page("/")
            #expect(overview.html.contains("data-test=\"dlq-fetch\">1<"))
        }
        await dashboard.close()
        await pipeline.stop()
    }
}

/// `marquee dashboard` as a process: bad arguments are usage errors, named.
@Suite(.serialized, .timeLimit(.minutes(1)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DashboardCLITests {
    @Test(arguments: [
        (["--address", "localhost"], "--address localhost: expected host:port"),
        (["--address", "127.0.0.1:70000"], "expected host:port"),
        (["--samples", "0"], "--samples must be at least 1"),
        (["--interval", "10ms"], "--interval must be at least 100ms"),
        (["--store", "mysql://x"], "MARQUEE_STORE"),
        (
            ["--allowed-host", "dash.example:8080"],
            "--allowed-host (MARQUEE_DASHBOARD_ALLOWED_HOSTS): 'dash.example:8080' has a port"
        ),
    ])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) async throws {
        let run = try await runBuiltExecutable(
            "marquee",
            ["dashboard"] + arguments,
            environment: ["MARQUEE_CONFIG": nil]
        )
        #expect(run.status == 64, "\(arguments): \(run.standardError)")
        #expect(run.standardError.contains(message), "\(run.standardError)")
    }

    /// `marquee dashboard` answers the names of `--allowed-host` (else `MARQUEE_DASHBOARD_ALLOWED_HOSTS`) besides
    /// the loopback names, and refuses others with 421.
    @Test(arguments: [
        (["--allowed-host", "dash.example"], [:]),
        ([], ["MARQUEE_DASHBOARD_ALLOWED_HOSTS": "other.example, dash.example"]),
    ])
    func servesOnlyItsHostNames(arguments: [String], environment: [String: String]) async throws {
        let serving = AsyncStream<Int>.makeStream()
        let process = try ChildProcess(
            "marquee",
            arguments: ["dashboard", "--address", "127.0.0.1:0", "--brokers", "127.0.0.1:1", "--timeout", "1"]
                + arguments,
            environment: environment.merging([
                "MARQUEE_WORKERS": "fetch=127.0.0.1:1", "MARQUEE_STORE": "sqlite:/nonexistent/marquee.db",
            ]) { $1 },
            readsStandardError: true
        ) { line in
            if let range = line.range(of: "serving http://127.0.0.1:"),
                let port = Int(line[range.upperBound...].prefix { $0.isNumber })
            {
                serving.continuation.yield(port)
            }
        }
        var ports = serving.stream.makeAsyncIterator()
        let port = try #require(await ports.next(), "marquee dashboard says where it serves")
        let base = "http://127.0.0.1:\(port)"
        #expect(try await httpGet(base + "/api/lag", host: "dash.example").0 == 200)
        #expect(try await httpGet(base + "/api/lag", host: "localhost:\(port)").0 == 200)
        let (status, body) = try await httpGet(base + "/api/lag", host: "evil.example:\(port)")
        #expect(status == 421)
        #expect(body.contains("misdirected request"), "\(body)")
        process.signal(SIGTERM)
        #expect(await process.waitForExit(killingAfter: .seconds(30)) == 0)
    }
}

// MARK: - A pipeline with known contents

/// Stage topics under a unique prefix with known messages, dead letters, a store and an image store with known
/// rows and bytes, and a real `marquee-index` worker (the records stage's only member).
///
/// - fetch: 5 messages on the main topic, none consumed (no member: STOPPED); tier 1 holds 2 overdue retries
///   and 3 not yet due; 2 dead letters (`tmdb.movie`, permanent, "TMDB answered 404 for movie …").
/// - images: empty, no member.
/// - records: consumed by the worker (OK, no lag); 1 poison dead letter (5 bytes that are not UTF-8).
/// - store: 3 movies, 2 books, 1 image (the poster of movie 1, its 92 px WebP in the image store).
struct DashboardPipeline {
    let prefix: String
    let groups: [String: String]
    let storePath: String
    let imageFolder: String
    let worker: IndexWorker
    let posterKey: ImageKey
    let posterBytes: [UInt8]
    /// The group whose committed offsets mark purged dead letters (`marquee dlq purge`), this pipeline's own.
    let readerGroup: String

    var workerAddress: String { String(self.worker.base.dropFirst("http://".count)) }

    /// The `MARQUEE_*` settings of this pipeline, as `marquee dashboard` reads them.
    var settings: [String: String] {
        [
            "MARQUEE_TOPIC_PREFIX": self.prefix, "MARQUEE_RETRY_DELAYS": "10s",
            "MARQUEE_GROUP_FETCH": self.groups["fetch"]!, "MARQUEE_GROUP_IMAGES": self.groups["images"]!,
            "MARQUEE_GROUP_RECORDS": self.groups["records"]!,
            "MARQUEE_WORKERS": "records=\(self.workerAddress),fetch=127.0.0.1:1",
            "MARQUEE_STORE": "sqlite:\(self.storePath)", "MARQUEE_IMAGE_STORE": "file://\(self.imageFolder)",
            "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_DLQ_READER_GROUP": self.readerGroup,
        ]
    }

    var configuration: DashboardConfiguration {
        get throws {
            var configuration = DashboardConfiguration(
                layout: try PipelineLayout(settings: self.settings),
                kafka: TestEnvironment.kafka
            )
            configuration.store = try StoreLocation(parsing: "sqlite:\(self.storePath)")
            configuration.imageStore = "file://\(self.imageFolder)"
            configuration.sampleInterval = .seconds(1)
            configuration.requestTimeout = .seconds(5)
            configuration.deadLetterReaderGroup = self.readerGroup
            return configuration
        }
    }

    static func start() async throws -> DashboardPipeline {
        let prefix = TestEnvironment.uniqueName("mqd") + "."
        let groups = Dictionary(
            uniqueKeysWithValues: ["fetch", "images", "records"].map { ($0, TestEnvironment.uniqueName("mqd-\($0)")) }
        )
        let topics = ["fetch", "images", "records"].map { StageTopics(stage: $0, prefix: prefix, tiers: 1) }
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll(topics, partitions: 1, admin: admin)
        let (fetch, records) = (topics[0], topics[2])

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var messages = (0..<5).map { KafkaProducerMessage(topic: fetch.main, key: "k\($0)", value: "{}") }
        for notBefore in [now - 60_000, now - 60_000, now + 3_600_000, now + 3_600_000, now + 3_600_000] {
            var envelope = Envelope.root()
            envelope.attempt = 2
            envelope.notBefore = notBefore
            messages.append(
                KafkaProducerMessage(
                    topic: fetch.retry(1),
                    key: Array("r".utf8),
                    value: Array("{}".utf8),
                    headers: envelope.kafkaHeaders
                )
            )
        }
        for id in [901, 902] {
            var envelope = Envelope.root()
            envelope.error = "TMDB answered 404 for movie \(id)"
            envelope.errorKind = .permanent
            envelope.origin = "\(fetch.main)/0/\(id - 901)"
            let job = #"{"v":1,"kind":"tmdb.movie","id":\#(id),"language":"ko-KR"}"#
            messages.append(
                KafkaProducerMessage(
                    topic: fetch.dlq,
                    key: Array("tmdb:movie:\(id)".utf8),
                    value: Array(job.utf8),
                    headers: envelope.kafkaHeaders
                )
            )
        }
        var poison = Envelope.root()
        poison.error = "the payload is not UTF-8"
        poison.errorKind = .poison
        messages.append(
            KafkaProducerMessage(
                topic: records.dlq,
                key: nil,
                value: [0xFF, 0xFE, 0x00, 0x41, 0x42],
                headers: poison.kafkaHeaders
            )
        )
        _ = try await withProducer(TestEnvironment.exactOffsetsProducer) { producer in try await producer.send(messages)
        }

        // The store and the image store.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(TestEnvironment.uniqueName("mqd"))
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let storePath = folder + "/marquee.db"
        let imageFolder = folder + "/images"
        let location = try StoreLocation(parsing: "sqlite:\(storePath)")
        let store = try Store.open(location, logger: .marqueeTest)
        _ = try await store.migrate()
        let sha256 = String(repeating: "5e", count: 32)
        let posterKey = ImageKey.variant(sha256: sha256, width: 92, format: "webp")
        var rows: [Record] = (1...3).map { (id: Int64) -> Record in
            movieRecord(id, fetchedAt: now - 90_000 + id * 1_000)
        }
        rows.append(bookRecord("OL1W", "Swift Programming", fetchedAt: now - 60_000))
        rows.append(bookRecord("OL2W", "Café Society", fetchedAt: now - 59_000))
        rows.append(
            TestRecords.poster(
                owner: "tmdb:movie:1",
                sha256: sha256,
                variantKey: posterKey.rawValue,
                fetchedAt: now - 80_000
            )
        )
        _ = try await store.write(rows)
        await store.close()
        let posterBytes = try SyntheticImage.render(
            .init(
                width: 92,
                height: 138,
                pattern: .split(top: [200, 60, 40], bottom: [30, 40, 90]),
                encoding: .webp(quality: 80)
            )
        )
        let images = try FileImageStore(root: imageFolder, logger: .marqueeTest)
        try await images.put(posterKey, posterBytes, contentType: "image/webp")

        let worker = try await IndexWorker.start(topics: records, group: groups["records"]!, store: location)
        return DashboardPipeline(
            prefix: prefix,
            groups: groups,
            storePath: storePath,
            imageFolder: imageFolder,
            worker: worker,
            posterKey: posterKey,
            posterBytes: posterBytes,
            readerGroup: TestEnvironment.uniqueName("mqd-dlq-reader")
        )
    }

    /// Samples until the worker answers ready (it joins its group ≈ 3 s after start) and the records group has
    /// its member; each round asks the broker and the worker, so this waits on them, not on a clock.
    func sampleUntilReady(_ dashboard: Dashboard) async throws {
        let app = Application(router: dashboard.router())
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            await dashboard.sample()
            let ready = try await app.test(.router) { client in
                let workers = try await client.json("/api/workers")["workers"]?.list ?? []
                let lag = try await client.json("/api/lag")["stages"]?.list ?? []
                return workers.contains { $0["address"]?.text == self.workerAddress && $0["state"]?.text == "ready" }
                    && lag.contains { $0["stage"]?.text == "records" && $0["members"]?.int == 1 }
            }
            if ready { return }
            try await Task.sleep(for: .milliseconds(250))  // between rounds of polling, not synchronisation
        }
        Issue.record("the records worker never became ready")
        throw CancellationError()
    }

    func stop() async { await self.worker.stop() }

    func removeFiles() {
        try? FileManager.default.removeItem(atPath: (self.storePath as NSString).deletingLastPathComponent)
    }
}

/// An Open Library book from search.
func bookRecord(_ work: String, _ title: String, fetchedAt: Int64) -> Record {
    Record(
        kind: .book,
        key: "openlibrary:work:\(work)",
        fetchedAt: fetchedAt,
        data: [
            "work_id": .string(work), "edition_id": .null, "title": .string(title), "authors": .array([]),
            "first_publish_year": .integer(2020), "isbn": .array([]), "cover_id": .null, "subjects": .array([]),
            "languages": .array([]), "edition_count": .integer(1),
        ]
    )
}

// MARK: - Reading answers

extension TestClientProtocol {
    /// A JSON answer (200) as a value.
    func json(_ uri: String) async throws -> JSONValue {
        try await self.execute(uri: uri, method: .get) { response in
            #expect(response.status == .ok, "\(uri): \(response.status)")
            return try JSONValue.parse(Array(buffer: response.body))
        }
    }

    /// A page: its status and HTML.
    func page(_ uri: String) async throws -> (status: HTTPResponse.Status, html: String) {
        try await self.execute(uri: uri, method: .get) { ($0.status, String(buffer: $0.body)) }
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    var list: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    var text: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var int: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value): Int64(exactly: value)
        default: nil
        }
    }

    var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}
