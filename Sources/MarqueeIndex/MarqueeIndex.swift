import ArgumentParser
import Logging
import MarqueeIndexStage
import MarqueeStore
import MarqueeWorker

import class Foundation.ProcessInfo

/// `marquee-index`: the indexer (DESIGN §5). Wiring only; the logic is in MarqueeIndexStage and MarqueeStore.
@main
struct MarqueeIndex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-index",
        abstract: "Indexer: consumes records in batches and upserts them into the store (PostgreSQL or SQLite).",
        discussion: """
            The store is MARQUEE_STORE: sqlite:./var/marquee.db (default) or \
            postgres://user:password@host:port/database?sslmode=disable|prefer|require. Its schema is migrated \
            before the first batch. Each batch is one transaction; offsets are committed only after it committed. \
            When the store is down the stage pauses (/readyz says why) and resumes when it is back; nothing goes \
            to the DLQ for that. Records their kind's schema refuses go to marquee.records.dlq with the field \
            at fault.

            Examples:
              marquee-index
              MARQUEE_STORE=postgres://marquee@127.0.0.1:15432/marquee marquee-index --batch-size 1000
            """
    )

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @OptionGroup var worker: WorkerOptions

    @Option(help: ArgumentHelp("Where the catalogue is stored.", discussion: "Env: MARQUEE_STORE."))
    var store: String = Self.environment["MARQUEE_STORE"] ?? StoreLocation.defaultValue

    @Option(help: ArgumentHelp("The most records in one store transaction.", discussion: "Env: MARQUEE_INDEX_BATCH_SIZE."))
    var batchSize: Int = Self.environment["MARQUEE_INDEX_BATCH_SIZE"].flatMap { Int($0) } ?? 500

    @Option(
        help: ArgumentHelp(
            "How long a record waits for others before a partial batch is written, in milliseconds.",
            discussion: "Env: MARQUEE_INDEX_BATCH_WAIT_MS."
        )
    )
    var batchWait: Int = Self.environment["MARQUEE_INDEX_BATCH_WAIT_MS"].flatMap { Int($0) } ?? 200

    @Option(
        help: ArgumentHelp(
            "Batches written at once, each in its own transaction (SQLite writes one at a time).",
            discussion: "Env: MARQUEE_INDEX_WRITERS."
        )
    )
    var writers: Int = Self.environment["MARQUEE_INDEX_WRITERS"].flatMap { Int($0) } ?? 2

    @Option(help: ArgumentHelp("PostgreSQL connections (ignored for SQLite; at least --writers).", discussion: "Env: MARQUEE_STORE_CONNECTIONS."))
    var connections: Int = Self.environment["MARQUEE_STORE_CONNECTIONS"].flatMap { Int($0) } ?? 4

    /// Test fault injection (the kill between the store commit and the offset commit; 0: off): hidden.
    @Option(help: .hidden)
    var crashAfterCommits: Int = Self.environment["MARQUEE_INDEX_CRASH_AFTER_COMMITS"].flatMap { Int($0) } ?? 0

    func validate() throws {
        guard (1...10_000).contains(self.batchSize) else { throw ValidationError("--batch-size must be 1…10000") }
        guard (0...60_000).contains(self.batchWait) else { throw ValidationError("--batch-wait must be 0…60000 ms") }
        guard (1...16).contains(self.writers) else { throw ValidationError("--writers must be 1…16") }
        guard (1...100).contains(self.connections) else { throw ValidationError("--connections must be 1…100") }
        do {
            _ = try StoreLocation(parsing: self.store)
        } catch {
            throw ValidationError("--store: \(error.message)")
        }
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(executable: "marquee-index")
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.index", level: common.logLevel)
        // Enough jobs in flight for every writer's batch and the next one gathering.
        let configuration = common.stageConfiguration(stage: "records", defaultConcurrency: (self.writers + 1) * self.batchSize)
        let metricsAddress = common.metricsAddress(defaultPort: 9103)
        let store = try Store.open(
            try StoreLocation(parsing: self.store),
            maximumConnections: max(self.connections, self.writers),
            timeout: common.storeDeadline,
            logger: logger
        )
        var settings = IndexSettings()
        settings.batchSize = self.batchSize
        settings.maxWait = .milliseconds(self.batchWait)
        settings.writers = self.writers
        settings.crashAfterCommits = self.crashAfterCommits > 0 ? self.crashAfterCommits : nil
        let handler = IndexHandler(store: store, settings: settings, logger: logger)
        try await WorkerRunner.run(
            configuration: configuration,
            handler: handler,
            metricsAddress: metricsAddress,
            logger: logger,
            whenStopped: { await store.close() }
        )
    }
}
