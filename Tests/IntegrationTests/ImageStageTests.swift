import Logging
import MarqueeCore
import MarqueeHTTP
import MarqueeImageStage
import MarqueeImageStore
@_spi(Testing) import MarqueeImaging
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import ServiceLifecycle
import Synchronization
import Testing

import class Foundation.FileManager
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// Outcomes of an image stage's jobs.
struct ImageReport: Sendable {
    var succeeded = 0
    var retried = 0
    var deadLettered = 0
    var finished: Int { self.succeeded + self.deadLettered }

    mutating func record(_ outcome: StageOutcome) {
        switch outcome {
        case .succeeded: self.succeeded += 1
        case .retried, .held: self.retried += 1
        case .deadLettered: self.deadLettered += 1
        }
    }
}

typealias ImageLedger = Observed<ImageReport>

/// An image stage in this process against `emulator`, storing into a fresh folder, while `body` runs.
func withImageStage<T>(
    emulator: UpstreamEmulatorProcess,
    _ body: (StageTopics, ImageLedger, URL) async throws -> T
) async throws -> T {
    var configuration = testStageConfiguration(
        stage: "images",
        retry: RetryPolicy(delays: [.milliseconds(300), .milliseconds(600)], jitter: 0.1)
    )
    configuration.concurrency = 4
    configuration.shutdownTimeout = .seconds(10)
    let ledger = ImageLedger(ImageReport())
    configuration.onJobFinished = { report in ledger.update { $0.record(report.outcome) } }
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    _ = try await StageTopics.createAll(
        [configuration.topics, StageTopics(stage: "records", prefix: configuration.topics.prefix, tiers: 0)],
        partitions: 2,
        admin: admin
    )
    let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-images"))
    defer { try? FileManager.default.removeItem(at: folder) }
    var http = HTTPFetcherConfiguration()
    http.allowsPrivateAddresses = true
    http.imageHostAllowlist = ["127.0.0.1"]
    let worker = try ImageWorker(
        settings: ImageWorkerSettings(
            imaging: ImagingConfiguration(),
            http: http,
            storeLocation: "file://" + folder.path
        ),
        environment: [:],
        logger: .marqueeTest
    )
    let stage = Stage(configuration: configuration, handler: worker.handler, logger: .marqueeTest)
    return try await whileRunning(worker.services + [stage]) { try await body(configuration.topics, ledger, folder) }
}

/// Enqueues an image job as a root job.
func enqueue(_ job: ImageJob, to topics: StageTopics) async throws {
    _ = try await withProducer { producer in
        try await producer.send(
            KafkaProducerMessage(
                topic: topics.main,
                key: Array(job.dedupeKey.utf8),
                value: job.encoded(),
                headers: Envelope.root().kafkaHeaders
            )
        )
    }
}

/// The files below `folder` whose name is `name`.
func files(named name: String, below folder: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: folder.path)
    var found: [String] = []
    while let path = enumerator?.nextObject() as? String {
        if path.hasSuffix("/" + name) { found.append(path) }
    }
    return found
}

/// The original-size URL of the first poster in the emulator's popular list.
func firstPosterURL(_ emulator: UpstreamEmulatorProcess) async throws -> String {
    let list = try await httpGet(emulator.tmdbBaseURL + "/movie/popular?api_key=marquee-emulator&language=en-US").1
    let posterPath = try #require(
        JSONDocument.parse(Array(list.utf8)).flatMap { json -> String? in
            guard case .object(let page) = json, case .array(let results)? = page["results"] else { return nil }
            return results.lazy.compactMap { movie -> String? in
                guard case .object(let fields) = movie, case .string(let path)? = fields["poster_path"] else {
                    return nil
                }
                return path
            }.first
        }
    )
    return emulator.tmdbImageBaseURL + "/original" + posterPath
}

@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImageStageTests {
    /// A TMDB poster is downloaded at the smallest rendition that covers 500 px, stored once however often it
    /// is enqueued, and two URLs with the same bytes share one stored image; each job gets its image record.
    @Test func postersAreStoredOnceAndRecordedPerOwner() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "9", "--movies", "40"])
        defer { emulator.terminate() }
        let poster = try await firstPosterURL(emulator)
        let same = try SyntheticImage.render(
            .init(width: 600, height: 900, pattern: .random(seed: 4), encoding: .jpeg(quality: 85))
        )
        try await emulator.putFile("a.jpg", same, contentType: "image/jpeg")
        try await emulator.putFile("b.jpg", same, contentType: "image/jpeg")

        try await withImageStage(emulator: emulator) { topics, ledger, folder in
            try await enqueue(ImageJob(url: poster, owner: "tmdb:movie:1", role: .poster), to: topics)
            try await enqueue(ImageJob(url: poster, owner: "tmdb:movie:1", role: .poster), to: topics)
            try await enqueue(
                ImageJob(url: emulator.fileURL("a.jpg"), owner: "openlibrary:work:OL1W", role: .cover),
                to: topics
            )
            try await enqueue(
                ImageJob(url: emulator.fileURL("b.jpg"), owner: "openlibrary:work:OL2W", role: .cover),
                to: topics
            )
            try await ledger.wait("four jobs finished") { $0.finished == 4 }
            #expect(ledger.snapshot.succeeded == 4)

            #expect(files(named: "manifest.json", below: folder).count == 2, "two distinct originals, each stored once")
            #expect(files(named: "500.webp", below: folder).count == 2)
            #expect(files(named: "92.jpg", below: folder).count + files(named: "92.jpeg", below: folder).count == 2)

            let records = try await read(4, from: topics.topic(ofStage: "records")).map { try Record.decode($0.value) }
            #expect(
                Set(records.map(\.key)) == [
                    "tmdb:movie:1:poster", "openlibrary:work:OL1W:cover", "openlibrary:work:OL2W:cover",
                ]
            )
            let posterRecord = try #require(records.first { $0.key == "tmdb:movie:1:poster" })
            #expect(posterRecord.data["rendition"] == .string("w500"), "not the 2000×3000 original")
            guard case .array(let variants)? = posterRecord.data["variants"] else {
                Issue.record("no variants in \(posterRecord.data)")
                return
            }
            let widths = variants.compactMap { variant -> Int64? in
                guard case .object(let fields) = variant, case .integer(let width)? = fields["width"] else {
                    return nil
                }
                return width
            }
            #expect(Set(widths) == [92, 185, 342, 500])
            let covers = records.filter { $0.key.hasSuffix(":cover") }
            #expect(covers.count == 2)
            #expect(Set(covers.map { $0.data["sha256"] }).count == 1, "the same bytes under two URLs are one image")
        }
    }

    /// A download that fails transiently goes through the retry tiers and then succeeds.
    @Test func aTransientDownloadFailureIsRetried() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "9", "--movies", "10"])
        defer { emulator.terminate() }
        let poster = try await firstPosterURL(emulator)
        try await emulator.control(["fault5xx": 1.0])  // every upstream answer is a 5xx for now
        try await withImageStage(emulator: emulator) { topics, ledger, folder in
            try await enqueue(ImageJob(url: poster, owner: "tmdb:movie:2", role: .poster), to: topics)
            try await ledger.wait("a retry") { $0.retried >= 1 }
            try await emulator.control(["fault5xx": 0.0])
            try await ledger.wait("the job finished") { $0.finished == 1 }
            #expect(ledger.snapshot.succeeded == 1)
            #expect(files(named: "manifest.json", below: folder).count == 1)
        }
    }
}
