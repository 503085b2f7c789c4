import ArgumentParser
// Linked, not called: jemalloc becomes the process's malloc (docs/fetch.md, "Memory allocator").
import Cjemalloc
import Logging
import MarqueeIndexStage
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import class Foundation.ProcessInfo

/// `marquee-index`: the indexer (docs/design.md, "Executables"). Wiring only; the logic is in MarqueeIndexStage and MarqueeStore.
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

    @Option(help: ArgumentHelp(Catalogue.store))
    var store: String?

    @Option(help: ArgumentHelp(Catalogue.indexBatchSize))
    var batchSize: String?

    @Option(help: ArgumentHelp(Catalogue.indexBatchWait))
    var batchWait: String?

    @Option(help: ArgumentHelp(Catalogue.indexWriters))
    var writers: String?

    @Option(help: ArgumentHelp(Catalogue.storeConnections))
    var connections: String?

    /// Test fault injection (the kill between the store commit and the offset commit; 0: off): hidden.
    @Option(help: .hidden)
    var crashAfterCommits: Int = Self.environment["MARQUEE_INDEX_CRASH_AFTER_COMMITS"].flatMap { Int($0) } ?? 0

    /// This executable's own flags, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.store, self.store), (Catalogue.indexBatchSize, self.batchSize),
            (Catalogue.indexBatchWait, self.batchWait),
            (Catalogue.indexWriters, self.writers), (Catalogue.storeConnections, self.connections),
        ])
    }

    func validate() throws {
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.indexWorker)
    }

    func run() async throws {
        let common = try self.worker.resolvedForRun(
            executable: "marquee-index",
            more: Catalogue.indexWorker,
            flags: self.flags
        )
        let logger = WorkerRunner.bootstrapLogging(label: "marquee.index", level: common.logLevel)
        let read = common.settings
        let (location, batchSize, batchWait, writers, connections) = try ConfigFileOptions.exitingOnSettingError(
            executable: "marquee-index"
        ) { () throws(SettingError) in
            (
                try read.value(Catalogue.store) { try StoreLocation(parsing: $0) },
                try read.value(Catalogue.indexBatchSize),
                try read.value(Catalogue.indexBatchWait), try read.value(Catalogue.indexWriters),
                try read.value(Catalogue.storeConnections)
            )
        }
        // Enough jobs in flight for every writer's batch and the next one gathering.
        let configuration = common.stageConfiguration(stage: "records", defaultConcurrency: (writers + 1) * batchSize)
        if common.concurrency != 0 && common.concurrency < batchSize {
            // Fewer records in flight than a batch holds: no batch fills, so each waits out its timer.
            logger.warning(
                "MARQUEE_CONCURRENCY \(common.concurrency) is below the batch size \(batchSize): every batch waits \(batchWait) ms for records that cannot come; set it to 0 (the default, \((writers + 1) * batchSize)) or to at least the batch size",
                metadata: [
                    "marquee.concurrency": "\(common.concurrency)", "marquee.index.batch_size": "\(batchSize)",
                ]
            )
        }
        let metricsAddress = common.metricsAddress(defaultPort: 9103)
        let store = try Store.open(
            location,
            maximumConnections: max(connections, writers),
            timeout: common.storeDeadline,
            logger: logger
        )
        var settings = IndexSettings()
        settings.batchSize = batchSize
        settings.maxWait = .milliseconds(batchWait)
        settings.writers = writers
        settings.crashAfterCommits = self.crashAfterCommits > 0 ? self.crashAfterCommits : nil
        let handler = IndexHandler(store: store, settings: settings, logger: logger)
        try await WorkerRunner.run(
            configuration: configuration,
            handler: handler,
            metricsAddress: metricsAddress,
            // The store stops last, after the handler wrote its last batch.
            services: [store, handler],
            logger: logger
        )
    }
}
