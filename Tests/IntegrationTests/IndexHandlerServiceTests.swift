import Foundation
import Logging
import MarqueeCore
import MarqueeIndexStage
import MarqueeJSON
import MarqueeStore
import MarqueeTestSupport
import ServiceLifecycle
import Testing

@testable import MarqueePipeline

// The batches' timers are an hour, far past the time limit: without the behaviour under test a record would wait
// for its timer and the test would fail on the limit, which is generous for a loaded machine.
/// The index handler as the service that writes its batches: what graceful shutdown writes, and what a record
/// submitted once it stopped gets. An SQLite store, no broker.
@Suite(.timeLimit(.minutes(3)))
struct IndexHandlerServiceTests {
    static func movie(_ id: Int64) -> StageJob {
        let data: JSONObject = [
            "movie_id": .integer(id), "original_title": .string("Original \(id)"), "original_language": .string("en"),
            "release_date": .string("2019-05-30"), "adult": .bool(false), "video": .bool(false),
            "popularity": .number(10),
            "vote_average": .integer(8), "vote_count": .integer(1000), "genre_ids": .array([]), "poster_path": .null,
            "backdrop_path": .null,
        ]
        let record = Record(kind: .movie, key: "tmdb:movie:\(id)", fetchedAt: 1_700_000_000_000, data: data)
        return StageJob(
            envelope: Envelope.root(),
            key: nil,
            payload: record.encoded(),
            source: "marquee.records/0/\(id)",
            context: JobContext(jobID: Envelope.root().id, kind: "movie", phase: "handling"),
            stageLogger: .marqueeTest
        )
    }

    static func withStore(_ body: (Store) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + TestEnvironment.uniqueName("index-handler") + ".db"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: .marqueeTest)
        _ = try await store.migrate()
        try await body(store)
        await store.close()
    }

    /// A partial batch waiting for its timer (an hour here) is written when graceful shutdown begins, and the
    /// service ends once it is in the store: its jobs return, not fail.
    @Test func gracefulShutdownWritesThePartialBatchAtOnce() async throws {
        try await Self.withStore { store in
            var settings = IndexSettings()
            settings.maxWait = .seconds(3600)
            let handler = IndexHandler(store: store, settings: settings, logger: .marqueeTest)
            let group = ServiceGroup(services: [handler], logger: .marqueeTest)
            try await withThrowingTaskGroup { tasks in
                tasks.addTask { try await group.run() }
                let jobs = (1...3).map { Self.movie($0) }
                let handled = Task {
                    try await withThrowingTaskGroup { jobTasks in
                        for job in jobs { jobTasks.addTask { _ = try await handler.handle(job) } }
                        try await jobTasks.waitForAll()
                    }
                }
                while handler.waitingRecords < 3 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(try await store.counts().movies == 0, "the batch waits for its timer")
                await group.triggerGracefulShutdown()
                try await handled.value
                try await tasks.waitForAll()
            }
            #expect(try await store.counts().movies == 3)
            #expect(handler.totals.batches == 1)
        }
    }

    /// Cancelled (not a graceful shutdown), the service ends at once and the records waiting for a batch fail as
    /// transient: none is left waiting.
    @Test func cancellingTheServiceFailsTheWaitingRecords() async throws {
        try await Self.withStore { store in
            var settings = IndexSettings()
            settings.maxWait = .seconds(3600)
            let handler = IndexHandler(store: store, settings: settings, logger: .marqueeTest)
            let running = Task { try await handler.run() }
            let jobs = Task {
                await withTaskGroup(of: (any Error)?.self) { group in
                    for id in Int64(1)...3 {
                        group.addTask {
                            do {
                                _ = try await handler.handle(Self.movie(id))
                                return nil
                            } catch {
                                return error
                            }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            while handler.waitingRecords < 3 { try await Task.sleep(for: .milliseconds(10)) }
            running.cancel()
            try await running.value
            let errors = await jobs.value
            #expect(errors.count == 3)
            #expect(errors.allSatisfy { ($0 as? StageError)?.kind == .transient }, "\(errors)")
            #expect(try await store.counts().movies == 0)
        }
    }

    /// Once the service ended, a record is refused at once as transient (its job goes to a retry tier), never
    /// left waiting for a batch nobody writes.
    @Test func aRecordSubmittedAfterTheServiceEndedFailsAsTransient() async throws {
        try await Self.withStore { store in
            let handler = IndexHandler(store: store, logger: .marqueeTest)
            let group = ServiceGroup(services: [handler], logger: .marqueeTest)
            async let running: Void = group.run()
            await group.triggerGracefulShutdown()
            try await running
            let error = await #expect(throws: StageError.self) { try await handler.handle(Self.movie(7)) }
            #expect(error?.kind == .transient)
            #expect(try await store.counts().movies == 0)
        }
    }
}
