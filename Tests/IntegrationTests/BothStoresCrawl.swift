import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// A crawl through the real workers into both stores: `marquee-fetch` against `marquee-upstream`, and two
/// `marquee-index` processes on its records, one writing a fresh SQLite file and one a fresh PostgreSQL database.
/// The fetch worker's own store (its shared limits and validators) is the SQLite file.
struct BothStoresCrawl {
    /// The fetch stage's topics (jobs go to `fetch.main`) and the records'.
    let fetch: StageTopics
    let records: StageTopics
    let sqlite: StoreLocation
    let postgres: StoreLocation
    let fetcher: ChildProcess
    /// The SQLite indexer, then the PostgreSQL one.
    let indexers: [IndexWorker]

    /// Both stores, SQLite first.
    var stores: [StoreLocation] { [self.sqlite, self.postgres] }

    /// Starts the workers on topics of their own (`stem` names them, one retry tier each), runs `body`, then stops
    /// the workers (each must exit 0) and removes the SQLite file.
    ///
    /// - Parameter environment: The fetch worker's settings beyond the emulator's URLs (keys, sessions, limits).
    static func run(
        emulator: UpstreamEmulatorProcess,
        stem: String,
        environment: [String: String],
        _ body: (BothStoresCrawl) async throws -> Void
    ) async throws {
        let (prefix, fetch, records) = try await pipelineTopics(stem, fetchTiers: 1, recordsTiers: 1)
        let path = "/tmp/\(TestEnvironment.uniqueName("marquee-\(stem)")).db"
        defer { removeSQLiteFiles(path) }
        let sqlite = try StoreLocation(parsing: "sqlite:\(path)")
        let postgres = try await freshPostgresDatabase()
        let (fetcher, _) = try await startFetchWorker(
            emulator: emulator,
            prefix: prefix,
            environment: environment.merging(["MARQUEE_STORE": sqlite.connectionString]) { $1 }
        )
        let indexers = [
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: sqlite),
            try await IndexWorker.start(topics: records, group: TestEnvironment.uniqueName("index"), store: postgres),
        ]
        let crawl = BothStoresCrawl(
            fetch: fetch,
            records: records,
            sqlite: sqlite,
            postgres: postgres,
            fetcher: fetcher,
            indexers: indexers
        )
        do {
            try await body(crawl)
        } catch {
            await crawl.stop()
            throw error
        }
        await crawl.stop()
    }

    private func stop() async {
        self.fetcher.signal(SIGTERM)
        #expect(await self.fetcher.waitForExit() == 0)
        for indexer in self.indexers { await indexer.stop() }
    }
}
