import Logging
import MarqueeCore
import MarqueeHTTP
import MarqueeImageStage
import MarqueeImageStore
import MarqueeImaging
import MarqueeJSON
import MarqueeOperations
import MarqueeTestSupport
import Testing

import class Foundation.FileManager
import class Foundation.ProcessInfo
import struct Foundation.URL

@testable import MarqueePipeline
@_spi(Benchmarking) @testable import MarqueeStore

/// Image workers revalidating what they stored (docs/image-store.md, "Revalidation"): the real image worker
/// (libcurl over loopback to `marquee-upstream`, libvips, a `file://` image store) with its validators in a
/// PostgreSQL store, and the image records written to that store as the indexer writes them.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImageRevalidationTests {
    /// An image worker revalidating with validators kept in `store`, storing images under `folder`.
    ///   - downloads: Counts each download's result as the image worker's metric does (`full`, `not_modified`,
    ///     `changed`).
    static func worker(
        store: Store,
        folder: URL,
        downloads: Observed<[String: Int]>? = nil
    ) throws -> ImageWorker {
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        http.imageHostAllowlist = ["127.0.0.1"]
        var settings = ImageWorkerSettings(
            imaging: ImagingConfiguration(),
            http: http,
            storeLocation: "file://" + folder.path
        )
        settings.validatorCache = StoreValidatorCache(store: store, answerTimeout: .seconds(30), logger: .marqueeTest)
        if let downloads {
            settings.handler.onDownload = { result in downloads.update { $0[result, default: 0] += 1 } }
        }
        return try ImageWorker(settings: settings, environment: [:], logger: .marqueeTest)
    }

    /// The w500 renditions' posters of the emulator's popular movies: `count` distinct poster URLs (original
    /// size, as the TMDB adapter enqueues them) and their names for `changeImages`.
    static func posters(_ emulator: UpstreamEmulatorProcess, count: Int) async throws -> [(url: String, name: String)] {
        var posters: [(url: String, name: String)] = []
        var seen: Set<String> = []
        var page = 1
        while posters.count < count {
            let list = try await httpGet(
                emulator.tmdbBaseURL + "/movie/popular?api_key=marquee-emulator&language=en-US&page=\(page)"
            ).1
            guard case .object(let body)? = JSONDocument.parse(Array(list.utf8)),
                case .array(let results)? = body["results"], !results.isEmpty
            else { break }
            for case .object(let movie) in results {
                guard case .string(let path)? = movie["poster_path"], seen.insert(path).inserted else { continue }
                posters.append((emulator.tmdbImageBaseURL + "/original" + path, "tmdb-images" + path))
            }
            page += 1
        }
        try #require(posters.count >= count, "the emulator lists \(posters.count) posters")
        return Array(posters.prefix(count))
    }

    static func job(_ url: String, owner: String) -> StageJob {
        let envelope = Envelope.root()
        return StageJob(
            envelope: envelope,
            key: nil,
            payload: ImageJob(url: url, owner: owner, role: .poster).encoded(),
            source: "test",
            context: JobContext(jobID: envelope.id, kind: "image", phase: "handling"),
            stageLogger: .marqueeTest
        )
    }

    /// Runs the jobs (`(url, owner)`) on `worker`, a few at a time as a stage would, and writes their image records
    /// to `store`; returns the records by owner.
    @discardableResult
    static func crawl(
        _ jobs: [(url: String, owner: String)],
        on worker: ImageWorker,
        store: Store
    ) async throws -> [String: Record] {
        let records = try await withThrowingTaskGroup(of: [Record].self) { group in
            var next = 0
            var records: [Record] = []
            func add() {
                let job = jobs[next]
                next += 1
                group.addTask {
                    try await worker.handler.handle(Self.job(job.url, owner: job.owner)).map {
                        try Record.decode($0.payload)
                    }
                }
            }
            for _ in 0..<min(8, jobs.count) { add() }
            while let done = try await group.next() {
                records += done
                if next < jobs.count { add() }
            }
            return records
        }
        _ = try await store.write(records)
        return Dictionary(records.map { (Self.text($0.data["owner"]) ?? "", $0) }) { $1 }
    }

    /// `/_stats`' counts of the TMDB image CDN: 200s, body bytes sent and 304s.
    static func imageCounts(
        _ emulator: UpstreamEmulatorProcess
    ) async throws -> (sent: Int, bytes: Int, notModified: Int) {
        let stats = try await emulator.stats()
        let counts = (stats["images"] as? [String: Any])?["tmdb-images"] as? [String: Any] ?? [:]
        return (counts["sent"] as? Int ?? 0, counts["bytes"] as? Int ?? 0, counts["notModified"] as? Int ?? 0)
    }

    static func text(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }

    static func sha256(_ record: Record?) -> String? { Self.text(record?.data["sha256"]) }

    /// The hash `owner`'s poster points to in the store.
    static func pointer(_ store: Store, _ owner: String) async throws -> String? {
        try await store.sql("SELECT sha256 FROM entity_images WHERE owner = '\(owner)' AND role = 'poster'").first?[0]
            .text
    }

    static func manifest(_ folder: URL, _ sha256: String) -> String {
        folder.path + "/" + ImageKey.manifest(sha256: sha256).rawValue
    }

    static func withSetup(
        movies: Int = 60,
        _ body: (UpstreamEmulatorProcess, Store, URL) async throws -> Void
    ) async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "11", "--movies", "\(movies)"])
        defer { emulator.terminate() }
        let store = try Store.open(try await freshPostgresDatabase(), timeout: .seconds(60), logger: .marqueeTest)
        _ = try await store.migrate()
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-reval"))
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try await body(emulator, store, folder)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// A second crawl of the same posters downloads no image byte (every one a 304), and the entities keep their
    /// images; a poster changed upstream between the crawls is replaced: new bytes, a new hash, the entity points
    /// to it; the old image stays while another entity points to it and is collected once none does.
    @Test func aSecondCrawlDownloadsNothingAndAChangedPosterIsReplaced() async throws {
        try await Self.withSetup { emulator, store, folder in
            let posters = try await Self.posters(emulator, count: 12)
            let downloads = Observed<[String: Int]>([:])
            let worker = try Self.worker(store: store, folder: folder, downloads: downloads)
            try await whileRunning(worker.services) {
                let jobs = posters.enumerated().map { (url: $0.element.url, owner: "tmdb:movie:\($0.offset)") }
                // Another entity shares poster 0 (the same image under the same URL).
                let first = try await Self.crawl(
                    jobs + [(posters[0].url, "tmdb:movie:shared")],
                    on: worker,
                    store: store
                )
                let firstCounts = try await Self.imageCounts(emulator)
                #expect(firstCounts.sent == 12, "one download per URL")
                #expect(firstCounts.bytes > 0)
                // The shared poster's second job is a 304 unless it ran beside the first (one download for both).
                let before = downloads.snapshot
                #expect(before["full"] == 12 && before["changed"] == nil, "the metric's counts: \(before)")

                try await emulator.resetStats()
                _ = try await emulator.control(["changeImages": [posters[0].name]])
                let second = try await Self.crawl(jobs, on: worker, store: store)
                let counts = try await Self.imageCounts(emulator)
                #expect(counts.notModified == 11, "every unchanged poster revalidated")
                #expect(counts.sent == 1, "only the changed poster downloaded")
                let after = downloads.snapshot
                #expect(
                    after["full"] == 12 && after["changed"] == 1
                        && after["not_modified", default: 0] - before["not_modified", default: 0] == 11,
                    "the metric's counts: \(before), then \(after)"
                )
                for index in 1..<12 {
                    #expect(Self.sha256(second["tmdb:movie:\(index)"]) == Self.sha256(first["tmdb:movie:\(index)"]))
                }
                let old = try #require(Self.sha256(first["tmdb:movie:0"]))
                let new = try #require(Self.sha256(second["tmdb:movie:0"]))
                #expect(new != old, "new bytes, a new hash")
                #expect(try await Self.pointer(store, "tmdb:movie:0") == new, "the entity points to the new image")
                #expect(try await Self.pointer(store, "tmdb:movie:shared") == old)
                #expect(FileManager.default.fileExists(atPath: Self.manifest(folder, new)))
                #expect(FileManager.default.fileExists(atPath: Self.manifest(folder, old)))
                let variants = try await store.sql("SELECT COUNT(*) FROM image_variants WHERE sha256 = '\(new)'")
                #expect((variants.first?[0].int ?? 0) > 0, "new variants recorded")

                // The old image is kept while an entity points to it.
                let images = try ImageStores.make(
                    location: "file://" + folder.path,
                    environment: [:],
                    fetcher: nil,
                    logger: .marqueeTest
                )
                let later = Int64(JobID.nowMilliseconds()) + 60_000
                let kept = try await ImageCollection.collect(store: store, images: images, recordedBefore: later)
                #expect(kept.removed.isEmpty)
                #expect(FileManager.default.fileExists(atPath: Self.manifest(folder, old)))

                // The sharing entity is crawled again: the changed poster is stored already (a 304), and then
                // nothing points to the old image: a collection removes it, and only it.
                try await emulator.resetStats()
                let shared = try await Self.crawl([(posters[0].url, "tmdb:movie:shared")], on: worker, store: store)
                #expect(Self.sha256(shared["tmdb:movie:shared"]) == new)
                #expect(try await Self.imageCounts(emulator).notModified == 1)
                let collected = try await ImageCollection.collect(store: store, images: images, recordedBefore: later)
                #expect(collected.removed == [old])
                #expect(!FileManager.default.fileExists(atPath: Self.manifest(folder, old)))
                let oldFolder = folder.path + "/" + old.prefix(2) + "/" + old.dropFirst(2).prefix(2) + "/" + old
                #expect(!FileManager.default.fileExists(atPath: oldFolder), "its variants went too")
                #expect(FileManager.default.fileExists(atPath: Self.manifest(folder, new)))
                let rows = try await store.sql("SELECT COUNT(*) FROM images WHERE sha256 = '\(old)'")
                #expect(rows.first?[0].int == 0)

                // A third crawl of everything: no image byte at all.
                try await emulator.resetStats()
                try await Self.crawl(jobs, on: worker, store: store)
                let third = try await Self.imageCounts(emulator)
                #expect(third.bytes == 0 && third.sent == 0 && third.notModified == 12)
            }
        }
    }

    /// Validators are not trusted when the image they name is gone from the image store: the URL is downloaded
    /// in full and stored again.
    @Test func aMissingStoredImageIsDownloadedInFull() async throws {
        try await Self.withSetup { emulator, store, folder in
            let poster = try await Self.posters(emulator, count: 1)[0]
            let worker = try Self.worker(store: store, folder: folder)
            try await whileRunning(worker.services) {
                let first = try await Self.crawl([(poster.url, "tmdb:movie:1")], on: worker, store: store)
                let hash = try #require(Self.sha256(first["tmdb:movie:1"]))
                let imageFolder = folder.path + "/" + hash.prefix(2) + "/" + hash.dropFirst(2).prefix(2) + "/" + hash
                try FileManager.default.removeItem(atPath: imageFolder)

                try await emulator.resetStats()
                let again = try await Self.crawl([(poster.url, "tmdb:movie:1")], on: worker, store: store)
                let counts = try await Self.imageCounts(emulator)
                #expect(counts.sent == 1 && counts.notModified == 0 && counts.bytes > 0)
                #expect(Self.sha256(again["tmdb:movie:1"]) == hash)
                #expect(FileManager.default.fileExists(atPath: Self.manifest(folder, hash)), "stored again")
                #expect(FileManager.default.fileExists(atPath: imageFolder + "/500.webp"))
            }
        }
    }

    /// Two image workers share the validators through the store: what one stored, the other revalidates
    /// without downloading; both at once on the same URLs (one of them changed) agree on every image.
    @Test func twoWorkersShareValidators() async throws {
        try await Self.withSetup { emulator, store, folder in
            let posters = try await Self.posters(emulator, count: 8)
            let jobs = posters.enumerated().map { (url: $0.element.url, owner: "tmdb:movie:\($0.offset)") }
            let one = try Self.worker(store: store, folder: folder)
            let two = try Self.worker(store: store, folder: folder)
            try await whileRunning(one.services + two.services) {
                let first = try await Self.crawl(jobs, on: one, store: store)
                try await emulator.resetStats()
                try await Self.crawl(jobs, on: two, store: store)
                let counts = try await Self.imageCounts(emulator)
                #expect(counts.notModified == 8 && counts.bytes == 0, "the second worker used the first's validators")

                try await emulator.resetStats()
                _ = try await emulator.control(["changeImages": [posters[0].name]])
                async let fromOne = Self.crawl(jobs, on: one, store: store)
                async let fromTwo = Self.crawl(jobs, on: two, store: store)
                let (a, b) = try await (fromOne, fromTwo)
                let both = try await Self.imageCounts(emulator)
                #expect((1...2).contains(both.sent), "the changed poster, once per worker at most")
                #expect(both.notModified == 16 - both.sent)
                let new = try #require(Self.sha256(a["tmdb:movie:0"]))
                #expect(Self.sha256(b["tmdb:movie:0"]) == new)
                #expect(new != Self.sha256(first["tmdb:movie:0"]))
                #expect(try await Self.pointer(store, "tmdb:movie:0") == new)
                let kept = try await store.validators(for: Rendition.pick(for: posters[0].url, largestWidth: 500).url)
                #expect(kept?.content == new, "the validators name the new image")
                #expect(files(named: "manifest.json", below: folder).count == 9, "eight posters and the changed one")
            }
        }
    }

    /// The figure: a second crawl of the same posters (1,000 with `MARQUEE_REVALIDATION_POSTERS=1000`)
    /// downloads no image byte; prints both crawls' counts.
    @Test(
        .timeLimit(.minutes(20)),
        .enabled(if: ProcessInfo.processInfo.environment["MARQUEE_REVALIDATION_POSTERS"] != nil)
    )
    func secondCrawlOfManyPosters() async throws {
        let count = Int(ProcessInfo.processInfo.environment["MARQUEE_REVALIDATION_POSTERS"] ?? "") ?? 1_000
        try await Self.withSetup(movies: count + count / 5) { emulator, store, folder in
            let posters = try await Self.posters(emulator, count: count)
            let jobs = posters.enumerated().map { (url: $0.element.url, owner: "tmdb:movie:\($0.offset)") }
            let worker = try Self.worker(store: store, folder: folder)
            try await whileRunning(worker.services) {
                let clock = ContinuousClock()
                let firstStart = clock.now
                try await Self.crawl(jobs, on: worker, store: store)
                let firstTime = clock.now - firstStart
                let first = try await Self.imageCounts(emulator)
                try await emulator.resetStats()
                let secondStart = clock.now
                try await Self.crawl(jobs, on: worker, store: store)
                let secondTime = clock.now - secondStart
                let second = try await Self.imageCounts(emulator)
                print(
                    "revalidation: posters=\(count) first: downloads=\(first.sent) bytes=\(first.bytes) 304s=\(first.notModified) time=\(firstTime)"
                        + " | second: downloads=\(second.sent) bytes=\(second.bytes) 304s=\(second.notModified) time=\(secondTime)"
                )
                #expect(first.sent == count)
                #expect(second.bytes == 0 && second.sent == 0 && second.notModified == count)
            }
        }
    }
}
