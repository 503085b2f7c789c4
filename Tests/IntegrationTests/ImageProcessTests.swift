import MarqueeCore
@_spi(Testing) import MarqueeImaging
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Synchronization
import Testing

import class Foundation.FileManager
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// What a `marquee-images` process of a test needs: the test broker, topics under `prefix`, a group of its own, a
/// metrics port of its own, short session and shutdown timeouts, and an image store in `folder`.
func imageWorkerEnvironment(prefix: String, folder: String) -> [String: String] {
    [
        "MARQUEE_BROKERS": TestEnvironment.brokers, "MARQUEE_TOPIC_PREFIX": prefix,
        "MARQUEE_GROUP": TestEnvironment.uniqueName("images"), "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0",
        "MARQUEE_SESSION_TIMEOUT": "6s", "MARQUEE_SHUTDOWN_TIMEOUT": "5s", "MARQUEE_IMAGE_STORE": "file://" + folder,
    ]
}

/// New `images` (one retry tier) and `records` topics under a prefix of their own, for a `marquee-images` process.
func imageProcessTopics(_ name: String) async throws -> (prefix: String, images: StageTopics, records: StageTopics) {
    let prefix = TestEnvironment.uniqueName(name) + "."
    let images = StageTopics(stage: "images", prefix: prefix, tiers: 1)
    let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
    let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
    _ = try await StageTopics.createAll([images, records], partitions: 2, admin: admin)
    return (prefix, images, records)
}

/// The `marquee-images` executable on hostile inputs: each is dead-lettered with its reason, and the process's
/// peak memory stays bounded throughout.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImageProcessTests {
    @Test func hostileImagesAreRefusedWithTheirReasonInBoundedMemory() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "2", "--movies", "10"])
        defer { emulator.terminate() }
        let poster = try SyntheticImage.render(
            .init(width: 1000, height: 1500, pattern: .random(seed: 3), encoding: .jpeg(quality: 90))
        )
        // name: (bytes, content type the server claims, what the reason must say)
        let hostile: [(String, [UInt8], String, String)] = [
            ("bomb.png", SyntheticImage.bombPNG(), "image/png", "pixels"),
            ("truncated.jpg", Array(poster.prefix(poster.count / 2)), "image/jpeg", "corrupt"),
            ("empty.jpg", [], "image/jpeg", "zero bytes"),
            (
                "drawing.svg",
                Array(
                    #"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="50000" height="50000"/>"#.utf8
                ), "image/jpeg", "SVG"
            ),
            ("page.html", Array("<!DOCTYPE html><html><body>Not found</body></html>".utf8), "image/jpeg", "HTML"),
        ]
        for (name, bytes, type, _) in hostile { try await emulator.putFile(name, bytes, contentType: type) }
        try await emulator.putFile("poster.jpg", poster, contentType: "image/jpeg")

        let (prefix, images, records) = try await imageProcessTopics("mqi")
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-images"))
        defer { try? FileManager.default.removeItem(at: folder) }

        let started = AsyncStream<String>.makeStream()
        let worker = try ChildProcess(
            "marquee-images",
            arguments: [],
            environment: imageWorkerEnvironment(prefix: prefix, folder: folder.path).merging([
                "MARQUEE_RETRY_DELAYS": "200ms", "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1",
                "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
            ]) { $1 },
            readsStandardError: true
        ) { line in
            if line.contains("\"images worker started\"") { started.continuation.yield(String(line)) }
        }
        var startedIterator = started.stream.makeAsyncIterator()
        let startLine = await startedIterator.next() ?? ""
        // Only marquee-fetch and marquee-index link jemalloc (docs/fetch.md, "Memory allocator"); this worker reports glibc's.
        #expect(startLine.contains("\"marquee.allocator\":\"glibc\""), "the start-up line: \(startLine)")

        for (name, _, _, _) in hostile {
            try await enqueue(ImageJob(url: emulator.fileURL(name), owner: "test:\(name)", role: .poster), to: images)
        }
        try await enqueue(
            ImageJob(url: emulator.fileURL("poster.jpg"), owner: "test:poster", role: .poster),
            to: images
        )

        let dead = try await read(hostile.count, from: images.dlq)
        var reasons: [String: String] = [:]
        for message in dead {
            let job = try ImageJob.decode(message.value)
            reasons[job.owner] = message.headers.string(Envelope.Header.error) ?? ""
            #expect(message.headers.string(Envelope.Header.errorKind) == "permanent", "\(job.owner)")
        }
        for (name, _, _, says) in hostile {
            let reason = try #require(reasons["test:\(name)"], "\(name) reached the DLQ")
            #expect(!reason.isEmpty)
            if !says.isEmpty { #expect(reason.localizedStandardContains(says), "\(name): \(reason)") }
        }
        // The good poster next to them went through.
        let stored = try await read(1, from: records.main, including: isEntityRecord)
        #expect(try Record.decode(stored[0].value).key == "test:poster:poster")

        let peak = try #require(worker.peakResidentBytes)
        #expect(peak < 200 * 1024 * 1024, "peak RSS \(peak / 1024 / 1024) MB")
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }
}
