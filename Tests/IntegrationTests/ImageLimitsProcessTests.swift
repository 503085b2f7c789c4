import MarqueeCore
import MarqueeKafka
import MarqueeLimits
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// Two `marquee-images` processes with one image host's rate limit (`MARQUEE_IMAGE_RATE_LIMITS`) shared through
/// an SQLite store: the host sees the limit, not twice it.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImageLimitsProcessTests {
    @Test func twoImageWorkersHoldOneHostsLimitTogether() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "4", "--movies", "200"])
        defer { emulator.terminate() }
        // Posters of two list pages: distinct URLs, so no download is shared.
        var posters: [String] = []
        for page in 1...2 {
            let (status, body) = try await httpGet(
                emulator.tmdbBaseURL + "/movie/popular?api_key=marquee-emulator&page=\(page)"
            )
            #expect(status == 200)
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            for movie in object?["results"] as? [[String: Any]] ?? [] {
                if let path = movie["poster_path"] as? String { posters.append(path) }
            }
        }
        let jobs = Array(Set(posters)).sorted().prefix(24)
        try #require(jobs.count >= 16, "the list pages name enough posters")

        let prefix = TestEnvironment.uniqueName("mqil") + "."
        let images = StageTopics(stage: "images", prefix: prefix, tiers: 1)
        let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([images, records], partitions: 4, admin: admin)
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-images"))
        let storePath = "/tmp/\(TestEnvironment.uniqueName("marquee-image-limits")).db"
        defer {
            try? FileManager.default.removeItem(at: folder)
            removeSQLiteFiles(storePath)
        }
        let rate = 6.0
        let group = TestEnvironment.uniqueName("images")
        // Each worker's main-topic partitions, from its "partitions assigned/revoked" lines in order.
        let held = Mutex<[Set<Int>]>([[], []])
        let mainTopic = prefix + "images["
        var workers: [ChildProcess] = []
        for index in 0..<2 {
            let started = AsyncStream<Void>.makeStream()
            workers.append(
                try ChildProcess(
                    "marquee-images",
                    arguments: [],
                    environment: [
                        "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix,
                        "MARQUEE_GROUP": group,
                        "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0", "MARQUEE_SESSION_TIMEOUT": "6s",
                        "MARQUEE_RETRY_DELAYS": "200ms",
                        "MARQUEE_SHUTDOWN_TIMEOUT": "5s", "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1",
                        "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
                        "MARQUEE_IMAGE_STORE": "file://" + folder.path,
                        "MARQUEE_IMAGE_RATE_LIMITS": "127.0.0.1=\(Int(rate))",
                        "MARQUEE_STORE": "sqlite:\(storePath)",
                    ],
                    readsStandardError: true
                ) { line in
                    if line.contains("\"images worker started\"") { started.continuation.yield() }
                    let assigned = line.contains("partitions assigned:")
                    guard assigned || line.contains("partitions revoked:") else { return }
                    var partitions: Set<Int> = []
                    for part in line.components(separatedBy: mainTopic).dropFirst() {
                        if let number = Int(part.prefix { $0.isNumber }) { partitions.insert(number) }
                    }
                    held.withLock { held in
                        if assigned { held[index].formUnion(partitions) } else { held[index].subtract(partitions) }
                    }
                }
            )
            var iterator = started.stream.makeAsyncIterator()
            _ = await iterator.next()
        }
        defer {
            for worker in workers { worker.signal(SIGKILL) }
        }
        // Jobs go in once both workers hold their share of the partitions (a bounded poll of their logs).
        let deadline = ContinuousClock.now + .seconds(60)
        while !held.withLock({
            $0.allSatisfy { !$0.isEmpty } && $0[0].union($0[1]).count == 4 && $0[0].isDisjoint(with: $0[1])
        }) {
            try #require(ContinuousClock.now < deadline, "both workers joined the group: \(held.withLock { $0 })")
            try await Task.sleep(for: .milliseconds(100))
        }
        for (index, path) in jobs.enumerated() {
            try await enqueue(
                ImageJob(url: emulator.tmdbImageBaseURL + "/w500" + path, owner: "test:\(index)", role: .poster),
                to: images
            )
        }
        // Every job ends in an image record.
        let produced = try await read(jobs.count, from: records.main) { ($0.keyString ?? "").hasPrefix("image:") }
        #expect(produced.count == jobs.count)

        let stats = try await emulator.stats()
        let downloads = statistic(stats, "timing", "tmdb-images", "requests")
        #expect(downloads == jobs.count)
        #expect(
            statistic(stats, "maxRequestsPerSecondByUpstream", "tmdb-images") <= Int(rate) + 1,
            "\(stats["maxRequestsPerSecondByUpstream"] ?? "")"
        )
        let timing = (stats["timing"] as? [String: Any])?["tmdb-images"] as? [String: Any]
        let span = ((timing?["last"] as? Double) ?? 0) - ((timing?["first"] as? Double) ?? 0)
        // At 6 a second for the pipeline, N downloads take (N - 1) / 6 s, not half of that.
        #expect(span >= Double(downloads - 1) / rate * 0.9, "\(downloads) downloads in \(span) s")

        // Both workers took part, and the store names the host's limit.
        let store = try Store.open(try StoreLocation(parsing: "sqlite:\(storePath)"), logger: .marqueeTest)
        let snapshot = try await store.coordinationSnapshot()
        await store.close()
        #expect(snapshot.limits.map(\.id) == ["127.0.0.1:anonymous@127.0.0.1"])
        #expect(Set(snapshot.usage.filter { $0.requests > 0 }.map(\.member)).count == 2, "both workers downloaded")
    }
}
