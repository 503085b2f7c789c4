import MarqueeCore
import MarqueeImageStage
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import Testing

import class Foundation.FileManager
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// The `marquee-images` process with `--validator-cache store`: the validators of what it downloads land in the
/// store with the image's hash, and a job for a URL it stored is a 304 that still emits the image record.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ImageRevalidationProcessTests {
    @Test func theWorkerKeepsValidatorsInTheStoreAndRevalidates() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "4", "--movies", "10"])
        defer { emulator.terminate() }
        let poster = try await firstPosterURL(emulator)
        let (prefix, images, records) = try await imageProcessTopics("mqr")
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-images"))
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-validators")).db"
        defer {
            try? FileManager.default.removeItem(at: folder)
            removeSQLiteFiles(path)
        }

        let worker = try ChildProcess(
            "marquee-images",
            arguments: ["--validator-cache", "store", "--store", "sqlite:\(path)"],
            environment: imageWorkerEnvironment(prefix: prefix, folder: folder.path).merging([
                "MARQUEE_RETRY_DELAYS": "200ms", "MARQUEE_ALLOW_PRIVATE_ADDRESSES": "1",
                "MARQUEE_IMAGE_HOSTS": "127.0.0.1",
            ]) { $1 },
            onLine: { _ in }
        )
        try await enqueue(ImageJob(url: poster, owner: "tmdb:movie:1", role: .poster), to: images)
        let first = try await read(1, from: records.main, including: isEntityRecord)
        let hash = try Record.decode(first[0].value).data["sha256"]
        try await emulator.resetStats()

        try await enqueue(ImageJob(url: poster, owner: "tmdb:movie:2", role: .poster), to: images)
        let both = try await read(2, from: records.main, including: isEntityRecord).map { try Record.decode($0.value) }
        #expect(Set(both.map(\.key)) == ["tmdb:movie:1:poster", "tmdb:movie:2:poster"])
        #expect(both.allSatisfy { $0.data["sha256"] == hash }, "the 304 names the stored image")
        let stats = try await emulator.stats()
        let counts = (stats["images"] as? [String: Any])?["tmdb-images"] as? [String: Int]
        #expect(
            counts?["notModified"] == 1 && counts?["sent"] == 0 && counts?["bytes"] == 0,
            "\(stats["images"] ?? "none")"
        )

        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
        let store = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: .marqueeTest)
        let kept = try await store.validators(for: Rendition.pick(for: poster, largestWidth: 500).url)
        await store.close()
        #expect(kept?.etag != nil)
        #expect(kept.map { .string($0.content ?? "") } == hash, "the validators name the stored image")
    }
}
