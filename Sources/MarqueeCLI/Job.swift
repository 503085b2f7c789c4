import ArgumentParser
import Logging
import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

import class Foundation.FileManager

/// `marquee job <id>`: one job followed through the stages (docs/job.md). The tree and its rendering live in
/// `MarqueeOperations` (`JobTrace`), the store's query in `MarqueeStore` (`Store.jobLineage`); this is their
/// wiring and presentation.
struct Job: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job",
        abstract: "Follow one job through the stages: its lineage tree and its dead letters.",
        discussion: """
            Given any job id of a crawl (a root id that marquee enqueue printed, or a job id from a log line's \
            marquee.job.id or a dead letter), reads its lineage from the store's job_outcomes (--store, else \
            $MARQUEE_STORE, else sqlite:./var/marquee.db): its root, then the whole tree under the root; a tree \
            of more than --limit jobs shows the path from the root down to the job and the job's children, and \
            says how many more there are. Then reads the dead-letter topics for the tree's jobs, purged letters \
            included. Each line: the job id (◀ marks the job asked about), its payload kind, stage, outcome \
            (done, retried, dead-lettered, or pending: spawned and no outcome stored yet), attempts, first and \
            last times (UTC), and the dead letter's id (stage/partition/offset, as marquee dlq show takes it) \
            with the error. --json prints one JSON object (fields in docs/job.md).

            If no broker answers, the store's lineage is still shown, with a line saying the dead-letter topics \
            could not be read; if the store cannot be read, what the dead-letter topics hold is shown.

            Examples:
              marquee job 01JD6W5R9B3MZ4K8Q2T7XYCV0N
              marquee job 01JD6W5R9B3MZ4K8Q2T7XYCV0N --json | jq .counts
              marquee job 01JD6W5R9B3MZ4K8Q2T7XYCV0N --no-dlq --store sqlite:var/marquee.db
              marquee job 01JD6W5R9B3MZ4K8Q2T7XYCV0N --limit 2000

            Exit status: 0 shown, both sources read; 1 shown, but the store or the dead-letter topics could not \
            be read (or nothing shown because the store could not be read); 64 bad arguments; 65 neither the \
            store nor the dead-letter topics know the job; 69 nothing could be shown and no broker answered.
            """
    )

    @Argument(help: ArgumentHelp("Any job of the tree: its marquee-id.", valueName: "id"))
    var id: String

    @Flag(name: .long, help: "Print one JSON object (snake_case keys) instead of the tree.")
    var json = false

    @Flag(name: .customLong("no-dlq"), help: "Do not read the dead-letter topics: the store's lineage only.")
    var noDLQ = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Show the whole tree when it has at most this many jobs (1–\(JobLineage.maximumLimit)).",
            discussion: "A larger tree shows the path from the root down to the job, and the job's children."
        )
    )
    var limit = JobLineage.defaultLimit

    @Option(name: .long, help: ArgumentHelp(Catalogue.store, valueName: "location"))
    var store: String?

    @Option(name: .long, help: "Seconds to wait for the store before giving up.")
    var storeTimeout = 10

    @OptionGroup var kafka: KafkaOptions

    func validate() throws {
        guard JobID.isWellFormed(self.id) else {
            throw ValidationError(
                "'\(self.id.prefix(80))' is not a job id (1 to 64 letters, digits, '-' or '_', such as a ULID)"
            )
        }
        guard (1...JobLineage.maximumLimit).contains(self.limit) else {
            throw ValidationError("--limit must be from 1 to \(JobLineage.maximumLimit)")
        }
        guard self.storeTimeout > 0 else {
            throw ValidationError("--store-timeout must be a positive number of seconds")
        }
        try WorkerOptions.validate(flags: self.flags, of: [Catalogue.store])
    }

    private var flags: [String: String] { Settings.flags([(Catalogue.store, self.store)]) }

    func run() async throws {
        let id = JobID(rawValue: self.id)
        let (limit, timeout) = (self.limit, self.storeTimeout)
        // Read here rather than as the option's default, so `--help` never shows a password.
        let locationText =
            (try? self.kafka.settings(more: self.flags).value(Catalogue.store)) ?? StoreLocation.defaultValue
        try await reportingKafkaErrors {
            let queue = try self.noDLQ ? nil : self.deadLetterQueue()
            let readLetters: ((Set<String>, Set<String>) async throws -> [DeadLetter])? = queue.map { queue in
                { jobs, roots in try await queue.letters(ofJobs: jobs, roots: roots) }
            }
            let opened = Self.openStore(locationText)
            let trace = await JobTrace.gather(
                id,
                lineage: { id in
                    let store = try opened.get()
                    let lineage = try await Self.withDeadline(timeout, store: store) {
                        try await store.jobLineage(of: id, limit: limit)
                    }
                    return JobTrace.Lineage(rootID: lineage.rootID, outcomes: lineage.outcomes, total: lineage.total)
                },
                deadLetters: readLetters
            )
            if case .success(let store) = opened { await store.close() }
            if self.json {
                print(String(decoding: trace.json.encoded(), as: UTF8.self))
            } else if trace.isFound {
                print(trace.text())
            }
            if !trace.isFound {
                var standardError = StandardError()
                print("marquee: " + trace.statusLine, to: &standardError)
            }
            let status = trace.exitStatus
            if status != ExitStatus.success.rawValue { throw ExitCode(status) }
        }
    }

    /// The dead-letter topics of the pipeline's layout.
    private func deadLetterQueue() throws -> DeadLetterQueue {
        var logger = Logger(label: "marquee")
        logger.logLevel = .critical
        return DeadLetterQueue(
            layout: try self.kafka.layout(),
            admin: try self.kafka.makeAdmin(),
            reader: try KafkaReader(configuration: self.kafka.configuration, logger: logger)
        )
    }

    /// A failure of the store, worded for the operator.
    struct StoreFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Opens the store as `marquee query` does: nothing created (a missing SQLite file is an error), nothing
    /// migrated.
    private static func openStore(_ text: String) -> Result<Store, StoreFailure> {
        let location: StoreLocation
        do {
            location = try StoreLocation(parsing: text)
        } catch {
            return .failure(StoreFailure(description: "\(error.message) (--store or MARQUEE_STORE)"))
        }
        if case .sqlite(let path) = location.engine, !FileManager.default.fileExists(atPath: path) {
            return .failure(StoreFailure(description: "no store at \(location) (the file does not exist)"))
        }
        var logger = Logger(label: "marquee")
        logger.logLevel = .critical
        do {
            return .success(try Store.open(location, maximumConnections: 1, logger: logger))
        } catch {
            return .failure(StoreFailure(description: error.message))
        }
    }

    /// Runs `body` on a store that has a schema, within `seconds`: PostgreSQL's pool keeps retrying a server it
    /// cannot reach without failing, so the deadline turns that into an answer.
    private static func withDeadline<T: Sendable>(
        _ seconds: Int,
        store: Store,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let location = store.location
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    guard try await store.schemaVersion() != nil else {
                        throw StoreFailure(description: "the store at \(location) is empty: run marquee-index first")
                    }
                    return try await body()
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(seconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let result = try await group.next(), let value = result else {
                    throw StoreFailure(description: "the store at \(location) did not answer within \(seconds) s")
                }
                return value
            }
        } catch let error as StoreError {
            throw StoreFailure(description: error.message)
        }
    }
}
