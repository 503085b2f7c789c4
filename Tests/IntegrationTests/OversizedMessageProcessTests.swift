import Crypto
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization

#if canImport(Glibc)
import Glibc
#endif

/// `marquee-fetch` meets what no stage may stop on: a mebibyte of poison, an upstream answer too large for the
/// records topic, an id header of invalid bytes. Each time the job ends (dead-lettered once, with a clear reason),
/// the partition moves on, and a restarted worker neither stops on it nor writes its letter again.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct OversizedMessageProcessTests {
    /// The test's own producer takes messages up to 2 MB (the broker accepts them); the worker's limit stays at
    /// its default, 1,000,000 bytes.
    static func withLargeProducer<T>(_ body: (KafkaProducer) async throws -> T) async throws -> T {
        var configuration = KafkaProducerConfiguration(kafka: TestEnvironment.kafka)
        configuration.maxMessageBytes = 2_000_000
        configuration.batchMessages = 1
        return try await withProducer(configuration, body)
    }

    /// The emulator's default TMDB key (without a key, TMDB jobs are held).
    static let environment = ["TMDB_API_KEY": "marquee-emulator"]

    /// Messages on `topic` (every partition), from its end offsets.
    static func count(_ topic: String) async throws -> Int64 {
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        return try await admin.watermarks(topic: topic).values.reduce(0) { $0 + $1.end - $1.start }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// A TMDB movie id of the emulator's catalogue (the first of its popular list).
    static func movieID(_ emulator: UpstreamEmulatorProcess) async throws -> Int64 {
        let (status, body) = try await httpGet(emulator.tmdbBaseURL + "/movie/popular?api_key=marquee-emulator&page=1")
        #expect(status == 200)
        let page = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let results = try #require(page["results"] as? [[String: Any]])
        return Int64(try #require(results.first?["id"] as? Int))
    }

    /// Reads the records topic until the outcome saying job `id` is done arrived (its records may be on other
    /// partitions, not all read yet); returns every message read.
    static func readUntilDone(_ id: JobID, from topic: String) async throws -> [KafkaConsumerMessage] {
        let key = Array("job.outcome:\(id.rawValue)".utf8)
        return try await withConsumer(
            TestEnvironment.consumer(group: TestEnvironment.uniqueName("read"), topics: [topic])
        ) { consumer in
            var messages: [KafkaConsumerMessage] = []
            for try await message in consumer.messages {
                messages.append(message)
                if message.key == key, String(decoding: message.value, as: UTF8.self).contains(#""outcome":"done""#) {
                    break
                }
            }
            return messages
        }
    }

    static func outcomes(_ messages: [KafkaConsumerMessage]) -> [String] {
        messages.filter { !isEntityRecord($0) }.map {
            String(decoding: ($0.key ?? []).dropFirst("job.outcome:".count), as: UTF8.self)
        }
    }

    @Test func aMebibyteOfPoisonIsDeadLetteredOnceAndThePartitionMovesOnAcrossARestart() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "31", "--movies", "100"])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqbig", fetchTiers: 3, recordsTiers: 0)
        let group = TestEnvironment.uniqueName("fetch")

        // On one partition, in order: a small poison, a mebibyte of random bytes under a valid envelope, a list page.
        var generator = SystemRandomNumberGenerator()
        let huge = (0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let small = Envelope.root()
        let big = Envelope.root()
        let list = FetchJob.tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none)
        let listEnvelope = Envelope.root()
        try await Self.withLargeProducer { producer in
            try await producer.deliver([
                KafkaProducerMessage(
                    topic: fetch.main,
                    partition: 0,
                    key: [1],
                    value: Array("{\"v\":1".utf8),
                    headers: small.kafkaHeaders
                ),
                KafkaProducerMessage(topic: fetch.main, partition: 0, key: [2], value: huge, headers: big.kafkaHeaders),
                KafkaProducerMessage(
                    topic: fetch.main,
                    partition: 0,
                    key: Array(list.dedupeKey.utf8),
                    value: list.encoded(),
                    headers: listEnvelope.kafkaHeaders
                ),
            ])
        }
        let (first, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: Self.environment.merging(["MARQUEE_GROUP": group]) { $1 }
        )
        defer { first.signal(SIGKILL) }
        // The list page behind the poison runs (the partition moved on), and each poison's outcome is written.
        _ = try await Self.readUntilDone(listEnvelope.id, from: records.main)
        #expect(try await read(20, from: records.main, including: isEntityRecord).count == 20)
        let letters = try await read(2, from: fetch.dlq)
        let letter = try #require(letters.first { $0.headers.string(Envelope.Header.id) == big.id.rawValue })
        #expect(letter.headers.string(Envelope.Header.errorKind) == "poison")
        #expect(letter.headers.string(Envelope.Header.originalSize) == "1048576")
        #expect(letter.headers.string(Envelope.Header.originalSHA256) == Self.sha256(huge))
        #expect(
            letter.value.count > 900_000 && letter.value.count < 1_000_000,
            "what fits is kept: \(letter.value.count) bytes"
        )
        #expect(Array(huge.prefix(letter.value.count)) == letter.value, "the letter keeps the original's first bytes")
        // Both poisons' outcomes are written (after their letters).
        let poisonOutcomes = try await read(2, from: records.main) {
            [small.id, big.id].map { Array("job.outcome:\($0.rawValue)".utf8) }.contains($0.key ?? [])
        }
        #expect(poisonOutcomes.count == 2)

        // Stopped and started again: nothing on the partition is dead-lettered a second time.
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0, "the worker stops cleanly")
        let (second, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: Self.environment.merging(["MARQUEE_GROUP": group]) { $1 }
        )
        defer { second.signal(SIGKILL) }
        let next = FetchJob.tmdbList(list: .popular, page: 2, language: "en-US", region: nil, follow: .none)
        let nextEnvelope = Envelope.root()
        try await Self.withLargeProducer { producer in
            try await producer.deliver([
                KafkaProducerMessage(
                    topic: fetch.main,
                    partition: 0,
                    key: Array(next.dedupeKey.utf8),
                    value: next.encoded(),
                    headers: nextEnvelope.kafkaHeaders
                )
            ])
        }
        _ = try await Self.readUntilDone(nextEnvelope.id, from: records.main)
        #expect(try await Self.count(fetch.dlq) == 2, "one letter per poison message")
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0)
    }

    /// Where an image store is configured (the image worker's), an oversized letter's whole original is kept there
    /// and the letter names it.
    @Test func theImageWorkerKeepsAnOversizedLettersWholeOriginalInItsImageStore() async throws {
        let prefix = TestEnvironment.uniqueName("mqio") + "."
        let images = StageTopics(stage: "images", prefix: prefix, tiers: 1)
        let records = StageTopics(stage: "records", prefix: prefix, tiers: 0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([images, records], partitions: 1, admin: admin)
        let folder = "/tmp/" + TestEnvironment.uniqueName("marquee-images")
        defer { try? FileManager.default.removeItem(atPath: folder) }

        var generator = SystemRandomNumberGenerator()
        let huge = (0..<1_100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let envelope = Envelope.root()
        try await Self.withLargeProducer { producer in
            try await producer.deliver([
                KafkaProducerMessage(
                    topic: images.main,
                    partition: 0,
                    key: [1],
                    value: huge,
                    headers: envelope.kafkaHeaders
                )
            ])
        }
        let worker = try ChildProcess(
            "marquee-images",
            arguments: [],
            environment: imageWorkerEnvironment(prefix: prefix, folder: folder)
        ) { _ in }
        defer { worker.signal(SIGKILL) }
        let letter = try #require(try await read(1, from: images.dlq).first)
        #expect(letter.headers.string(Envelope.Header.errorKind) == "poison")
        #expect(letter.headers.string(Envelope.Header.originalSize) == "1100000")
        #expect(letter.headers.string(Envelope.Header.originalSHA256) == Self.sha256(huge))
        let path = "\(folder)/dlq/\(images.main)/0/0"
        #expect(letter.headers.string(Envelope.Header.originalLocation) == "file://" + path)
        let kept = try #require(FileManager.default.contents(atPath: path), "the original is in the image store")
        #expect(Array(kept) == huge)
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }

    @Test func anAnswerTooLargeForTheRecordsTopicFailsItsJobAndTheStageGoesOnAcrossARestart() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "32", "--movies", "100"])
        defer { emulator.terminate() }
        let movie = try await Self.movieID(emulator)
        _ = try await emulator.control(["paddedMovie": Int(movie), "paddedOverviewBytes": 1_100_000])
        let (prefix, fetch, records) = try await pipelineTopics("mqbigrec", fetchTiers: 3, recordsTiers: 0)
        let group = TestEnvironment.uniqueName("fetch")
        let padded = try await enqueue(.tmdbMovie(id: movie, language: "en-US", follow: .none), to: fetch)
        let (first, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: Self.environment.merging(["MARQUEE_GROUP": group]) { $1 }
        )
        defer { first.signal(SIGKILL) }
        let letter = try #require(try await read(1, from: fetch.dlq).first)
        #expect(letter.headers.string(Envelope.Header.id) == padded.id.rawValue)
        #expect(letter.headers.string(Envelope.Header.errorKind) == "permanent")
        let reason = letter.headers.string(Envelope.Header.error) ?? ""
        #expect(
            reason.contains("over the 1000000 bytes limit") || reason.contains("over the 1.0 MB limit"),
            "the reason names the limit: \(reason)"
        )
        #expect(reason.contains("--max-message-bytes"), "and the setting: \(reason)")

        // The stage goes on: a job after it runs; after a restart the failed job is not run or dead-lettered again.
        let after = try await enqueue(
            .tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none),
            to: fetch
        )
        _ = try await Self.readUntilDone(after.id, from: records.main)
        first.signal(SIGTERM)
        #expect(await first.waitForExit() == 0)
        let (second, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: Self.environment.merging(["MARQUEE_GROUP": group]) { $1 }
        )
        defer { second.signal(SIGKILL) }
        let last = try await enqueue(
            .tmdbList(list: .popular, page: 2, language: "en-US", region: nil, follow: .none),
            to: fetch
        )
        _ = try await Self.readUntilDone(last.id, from: records.main)
        #expect(try await Self.count(fetch.dlq) == 1)
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0)
    }

    @Test func anIDHeaderOfInvalidBytesIsPoisonAndLeavesNoOutcomeForTheIndexerToRefuse() async throws {
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "33", "--movies", "100"])
        defer { emulator.terminate() }
        let (prefix, fetch, records) = try await pipelineTopics("mqbadid", fetchTiers: 3, recordsTiers: 0)
        let list = FetchJob.tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: .none)
        let badID: [UInt8] = [0x30, 0x31, 0xFF, 0xFE, 0xC0, 0x80]
        let good = Envelope.root()
        try await Self.withLargeProducer { producer in
            try await producer.deliver([
                KafkaProducerMessage(
                    topic: fetch.main,
                    partition: 0,
                    key: Array(list.dedupeKey.utf8),
                    value: list.encoded(),
                    headers: [KafkaHeader(key: Envelope.Header.id, value: badID)]
                ),
                KafkaProducerMessage(
                    topic: fetch.main,
                    partition: 0,
                    key: Array(list.dedupeKey.utf8),
                    value: list.encoded(),
                    headers: good.kafkaHeaders
                ),
            ])
        }
        let (worker, _) = try await startFetchWorker(emulator: emulator, prefix: prefix, environment: Self.environment)
        defer { worker.signal(SIGKILL) }
        let letter = try #require(try await read(1, from: fetch.dlq).first)
        #expect(letter.headers.string(Envelope.Header.errorKind) == "poison")
        #expect(
            letter.headers.first { $0.key == Envelope.Header.id }?.value == badID,
            "the original header, byte for byte"
        )
        #expect(letter.headers.string(Envelope.Header.error)?.contains("header marquee-id") == true)
        // The valid job's records and its outcome arrive; it is the only outcome (none carries the bad id).
        let written = try await Self.readUntilDone(good.id, from: records.main)
        #expect(Self.outcomes(written) == [good.id.rawValue])
        worker.signal(SIGTERM)
        #expect(await worker.waitForExit() == 0)
    }
}
