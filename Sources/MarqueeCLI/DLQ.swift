import ArgumentParser
import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import MarqueeSettings
import MarqueeWorker

import struct Foundation.Data
import class Foundation.FileHandle

/// `marquee dlq`: the dead letters of every stage (docs/dlq.md). `list` and `show` read; `replay` sends letters
/// back to their stage; `purge` hides them by moving a reader group's committed offsets. Nothing is ever deleted.
struct DLQ: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect, replay and purge dead letters.",
        discussion: """
            Dead letters live in <prefix><stage>.dlq (fetch, images, records). A letter's id is \
            stage/partition/offset, e.g. fetch/2/17. Purged letters are those before the committed offset of \
            the reader group (--reader-group, default <prefix>dlq-reader): they stop showing, but the topic \
            keeps them, and --all shows them again. Replay and purge never delete anything.

            Examples:
              marquee dlq list
              marquee dlq list --stage fetch --error-kind transient --since 2h
              marquee dlq list --kind tmdb.movie --grep 404 --json
              marquee dlq show fetch/2/17
              marquee dlq show fetch/2/17 --raw > payload.json
              marquee dlq replay --stage fetch --error-kind transient --dry-run
              marquee dlq replay fetch/2/17 fetch/0/4 --purge
              marquee dlq replay --kind kakao.poster --rate 10
              marquee dlq purge --stage images --error-kind permanent
              marquee dlq purge --all

            Exit status: 0 done; 1 partly done (some letters were not replayed or could not be hidden); \
            64 bad arguments; 65 a dead letter id that is malformed or names no letter; 69 no broker answered.
            """,
        subcommands: [List.self, Show.self, Replay.self, Purge.self],
        defaultSubcommand: List.self
    )
}

// MARK: - Shared options

/// Where the dead letters are: the broker, the pipeline's layout, and the reader group that marks purges.
struct DLQOptions: ParsableArguments {
    @OptionGroup var kafka: KafkaOptions
    @Option(name: .long, help: ArgumentHelp(Catalogue.dlqReaderGroup, valueName: "group"))
    var readerGroup: String?

    func validate() throws {
        try WorkerOptions.validate(flags: self.flags, of: [Catalogue.dlqReaderGroup])
    }

    var flags: [String: String] { Settings.flags([(Catalogue.dlqReaderGroup, self.readerGroup)]) }

    /// The dead-letter topics of the layout, read with `--timeout` per request.
    func queue() throws -> DeadLetterQueue {
        let layout = try self.kafka.layout()
        var queue = DeadLetterQueue(
            layout: layout,
            admin: try self.kafka.makeAdmin(),
            reader: try KafkaReader(configuration: self.kafka.configuration, logger: self.kafka.logger),
            readerGroup: try? self.kafka.settings(more: self.flags).value(Catalogue.dlqReaderGroup)
        )
        queue.readTimeout = .seconds(self.kafka.timeout)
        return queue
    }
}

/// The filters `list`, `replay` and `purge` share.
struct DeadLetterFilterOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Only these stages: fetch, images, records (repeat or comma-separate).", valueName: "stage")
    )
    var stage: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("Only these payload kinds, e.g. tmdb.movie, image, movie, unknown.", valueName: "kind")
    )
    var kind: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("Only these error kinds: transient, permanent, poison, unknown.", valueName: "kind")
    )
    var errorKind: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("Only letters whose error contains this text (ignoring case).", valueName: "text")
    )
    var grep: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only letters dead-lettered since: a time ago (90s, 15m, 2h, 3d, 1w) or ISO 8601.",
            valueName: "time"
        )
    )
    var since: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Only letters dead-lettered before: a time ago or ISO 8601.", valueName: "time")
    )
    var until: String?

    /// The filter options, for messages.
    static let names = "--stage, --kind, --error-kind, --grep, --since, --until"

    /// Whether any filter is given.
    var isSet: Bool {
        !self.stage.isEmpty || !self.kind.isEmpty || !self.errorKind.isEmpty || self.grep != nil || self.since != nil
            || self.until != nil
    }

    /// The filter these options describe (purged letters excluded; the caller decides).
    ///
    /// - Throws: A `ValidationError` (exit 64) for an unknown stage or error kind, or a time it cannot read.
    func filter(layout: PipelineLayout, nowMilliseconds: Int64) throws -> DeadLetterFilter {
        do {
            return try DeadLetterFilter(
                stages: self.stage,
                kinds: self.kind,
                errorKinds: self.errorKind,
                errorText: self.grep,
                since: self.since,
                until: self.until,
                layout: layout,
                nowMilliseconds: nowMilliseconds
            )
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

// MARK: - list

extension DLQ {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List dead letters, newest last, with a count per stage and error kind.",
            discussion: """
                Columns: ID (stage/partition/offset), KIND (the payload's kind), ERROR KIND, ATTEMPTS, AGE and the \
                error, cut to fit. Purged letters are left out unless --all. --json prints one JSON object per \
                letter (snake_case keys, see docs/dlq.md) and the summary on standard error.

                Examples:
                  marquee dlq list --stage fetch --since 2h
                  marquee dlq list --error-kind poison --all
                  marquee dlq list --kind tmdb.movie --json | jq -r .error
                """
        )

        @OptionGroup var options: DLQOptions
        @OptionGroup var filters: DeadLetterFilterOptions

        @Flag(name: .long, help: "Include purged letters.")
        var all = false

        @Option(name: .long, help: "Show the newest N matching letters (0: every one). The counts cover every match.")
        var limit = 100

        @Flag(name: .long, help: "Print JSON lines instead of a table.")
        var json = false

        func validate() throws {
            guard self.limit >= 0 else { throw ValidationError("--limit must be 0 (every letter) or more") }
        }

        func run() async throws {
            try await reportingKafkaErrors {
                let queue = try self.options.queue()
                let now = Int64(JobID.nowMilliseconds())
                var filter = try self.filters.filter(layout: queue.layout, nowMilliseconds: now)
                filter.includesPurged = self.all
                let listing = try await queue.list(filter, limit: self.limit == 0 ? nil : self.limit)
                if self.json {
                    for letter in listing.letters {
                        print(String(decoding: letter.json(nowMilliseconds: now).encoded(), as: UTF8.self))
                    }
                    var standardError = StandardError()
                    print(listing.summary(includesPurged: self.all), to: &standardError)
                    return
                }
                print(listing.text(nowMilliseconds: now, includesPurged: self.all))
            }
        }

    }
}

// MARK: - show

extension DLQ {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one dead letter in full: its facts, every header and the payload.",
            discussion: """
                The payload is pretty-printed when it is JSON, else printed as text with unprintable bytes \
                escaped (\\xNN). --raw writes the payload's exact bytes to standard output and nothing else; \
                --json prints one JSON object (docs/dlq.md).

                Examples:
                  marquee dlq show fetch/2/17
                  marquee dlq show marquee.fetch.dlq/2/17 --json
                  marquee dlq show fetch/2/17 --raw | jq .
                """
        )

        @OptionGroup var options: DLQOptions

        @Argument(help: ArgumentHelp("The letter: stage/partition/offset, e.g. fetch/2/17.", valueName: "id"))
        var id: String

        @Flag(name: .long, help: "Write the payload's exact bytes to standard output, nothing else.")
        var raw = false

        @Flag(name: .long, help: "Print one JSON object with the headers and the payload.")
        var json = false

        func validate() throws {
            guard !(self.raw && self.json) else { throw ValidationError("--raw and --json cannot be combined") }
        }

        func run() async throws {
            try await reportingKafkaErrors {
                let queue = try self.options.queue()
                let id = try DLQ.parseID(self.id, layout: queue.layout)
                guard let letter = try await queue.letters([id])[id] else {
                    let topic = queue.layout.stage(id.stage)?.topics.dlq ?? id.stage
                    throw fail(
                        "no dead letter \(id): \(topic) holds none at partition \(id.partition), offset \(id.offset)",
                        code: DLQ.badID
                    )
                }
                let now = Int64(JobID.nowMilliseconds())
                if self.raw {
                    FileHandle.standardOutput.write(Data(letter.record.value))
                } else if self.json {
                    print(
                        String(
                            decoding: letter.json(nowMilliseconds: now, includingContent: true).encoded(),
                            as: UTF8.self
                        )
                    )
                } else {
                    print(letter.details(nowMilliseconds: now))
                }
            }
        }

    }
}

// MARK: - replay

extension DLQ {
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send dead letters back to their stage's main topic, as new deliveries of the same jobs.",
            discussion: """
                Name the letters by id, or select them with filters (purged letters only with --all). Each \
                replay carries the letter's key and payload unchanged, its id, root, parent and traceparent, \
                marquee-attempt 1, and marquee-replayed-from: <dlq topic>/<partition>/<offset>; the error, \
                origin and not-before headers are dropped. The dead letters stay where they are: add --purge to \
                hide the replayed ones once every replay was acknowledged. Poison letters are refused unless \
                --include-poison. A replay the broker does not acknowledge (down, cut off) is sent again, waiting \
                up to 10 s between tries, for as long as 10 minutes after the broker last took one: an outage \
                delays a replay and leaves no letter behind; a replay sent twice is the same job twice.

                Examples:
                  marquee dlq replay --stage fetch --error-kind transient --dry-run
                  marquee dlq replay fetch/2/17 fetch/0/4
                  marquee dlq replay --kind tmdb.movie --since 1d --rate 20 --purge
                """
        )

        @OptionGroup var options: DLQOptions
        @OptionGroup var filters: DeadLetterFilterOptions

        @Argument(
            help: ArgumentHelp("Letters to replay: stage/partition/offset (instead of filters).", valueName: "id")
        )
        var ids: [String] = []

        @Flag(name: .long, help: "Include purged letters (alone: replay every letter the topics hold).")
        var all = false

        @Flag(name: .long, help: "Print how many letters would be replayed and a sample of 5; send nothing.")
        var dryRun = false

        @Option(name: .long, help: ArgumentHelp("Send at most N replays a second.", valueName: "N"))
        var rate: Int?

        @Flag(name: .long, help: "Replay poison letters too (they failed to parse; replay them only after a fix).")
        var includePoison = false

        @Flag(name: .long, help: "After every replay was acknowledged, purge the replayed letters.")
        var purge = false

        func validate() throws {
            guard self.ids.isEmpty || !self.filters.isSet else {
                throw ValidationError("name letters by id or select them with filters, not both")
            }
            guard !self.ids.isEmpty || self.filters.isSet || self.all else {
                throw ValidationError("name what to replay: ids, filters (\(DeadLetterFilterOptions.names)), or --all")
            }
            if let rate = self.rate { guard rate > 0 else { throw ValidationError("--rate must be at least 1") } }
            guard !(self.dryRun && self.purge) else {
                throw ValidationError("--dry-run sends nothing, so it cannot --purge")
            }
        }

        func run() async throws {
            var incomplete = false
            try await reportingKafkaErrors {
                let queue = try self.options.queue()
                let layout = queue.layout
                let selected = try await DLQ.selectLetters(
                    ids: self.ids,
                    filters: self.filters,
                    includingPurged: self.all,
                    queue: queue
                )
                let (letters, poison) = DeadLetterReplay.selecting(selected, includingPoison: self.includePoison)
                var standardError = StandardError()
                if !poison.isEmpty {
                    print("marquee: " + DeadLetterReplay.refusal(poison), to: &standardError)
                    incomplete = true
                }
                if self.dryRun {
                    print(DeadLetterReplay.dryRun(letters, layout: layout))
                    incomplete = false  // nothing was asked to be done
                    return
                }
                guard !letters.isEmpty else {
                    print("nothing to replay", to: &standardError)
                    return
                }
                var configuration = KafkaProducerConfiguration(kafka: self.options.kafka.configuration)
                configuration.kafka.clientID = "marquee-dlq"
                let logger = self.options.kafka.logger
                var sent: [DeadLetter] = []
                var resent = 0
                try await DeadLetterReplay.send(
                    letters,
                    layout: layout,
                    producer: { () throws(KafkaError) in try KafkaProducer(configuration: configuration, logger: logger)
                    },
                    ratePerSecond: self.rate,
                    resending: { count, error, wait in
                        resent += count
                        var standardError = StandardError()
                        print(
                            "marquee: the broker did not acknowledge \(count) replay\(count == 1 ? "" : "s") "
                                + "(\(error.reason)): sending \(count == 1 ? "it" : "them") again in \(wait)",
                            to: &standardError
                        )
                    }
                ) { letter, result in
                    switch result {
                    case .success(let report):
                        sent.append(letter)
                        print(DeadLetterReplay.line(letter, sentTo: report))
                    case .failure(let error):
                        var standardError = StandardError()
                        print("marquee: \(letter.id) not replayed: \(error.reason)", to: &standardError)
                    }
                }
                print(DeadLetterReplay.summary(sent: sent, of: letters.count, layout: layout), to: &standardError)
                if resent > 0 {
                    print(
                        "\(resent) replay sends went again after the broker did not acknowledge them; a replay sent "
                            + "twice is the same job twice, which the pipeline stores once.",
                        to: &standardError
                    )
                }
                if sent.count < letters.count { incomplete = true }
                if self.purge, !sent.isEmpty {
                    let ids = Set(sent.map(\.id))
                    let plan = try await queue.planPurge(stages: Set(ids.map(\.stage))) { ids.contains($0.id) }
                    try await queue.commit(plan)
                    let alreadyPurged = sent.filter(\.isPurged).count
                    if !DLQ.reportPurge(plan, alreadyPurged: alreadyPurged, verb: "purged") { incomplete = true }
                }
            }
            if incomplete { throw ExitCode.failure }
        }

    }
}

// MARK: - purge

extension DLQ {
    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hide dead letters by advancing the reader group's committed offsets; nothing is deleted.",
            discussion: """
                A committed offset is one position per partition, so a purge hides the selected letters of each \
                partition up to, not past, the first letter that it does not select: a selected letter after \
                such a letter stays visible, and the count of those is reported (exit 1). Letters that arrive \
                while purging are never hidden. `marquee dlq list --all` still shows purged letters.

                Examples:
                  marquee dlq purge --all
                  marquee dlq purge --stage fetch --error-kind permanent
                  marquee dlq purge fetch/0/3 fetch/0/4
                  marquee dlq purge --kind image --dry-run
                """
        )

        @OptionGroup var options: DLQOptions
        @OptionGroup var filters: DeadLetterFilterOptions

        @Argument(help: ArgumentHelp("Letters to purge: stage/partition/offset (instead of filters).", valueName: "id"))
        var ids: [String] = []

        @Flag(name: .long, help: "Purge every letter (of the --stage given, if any).")
        var all = false

        @Flag(name: .long, help: "Say what would be purged; commit nothing.")
        var dryRun = false

        func validate() throws {
            guard self.ids.isEmpty || (!self.filters.isSet && !self.all) else {
                throw ValidationError("name letters by id or select them with filters or --all, not both")
            }
            guard !self.ids.isEmpty || self.filters.isSet || self.all else {
                throw ValidationError("name what to purge: ids, filters (\(DeadLetterFilterOptions.names)), or --all")
            }
        }

        func run() async throws {
            var complete = true
            try await reportingKafkaErrors {
                let queue = try self.options.queue()
                let plan: DeadLetterPurge
                var alreadyPurged = 0
                if self.ids.isEmpty {
                    let filter = try self.filters.filter(
                        layout: queue.layout,
                        nowMilliseconds: Int64(JobID.nowMilliseconds())
                    )
                    plan = try await queue.planPurge(stages: filter.stages) { filter.matches($0) }
                } else {
                    let named = try await queue.letters(
                        named: try self.ids.map { try DLQ.parseID($0, layout: queue.layout) }
                    )
                    if let missing = named.missing.sorted().first {
                        throw fail("no dead letter \(missing): nothing was purged", code: DLQ.badID)
                    }
                    let ids = Set(named.letters.map(\.id))
                    alreadyPurged = named.letters.filter(\.isPurged).count
                    plan = try await queue.planPurge(stages: Set(ids.map(\.stage))) { ids.contains($0.id) }
                }
                if !self.dryRun { try await queue.commit(plan) }
                complete = DLQ.reportPurge(
                    plan,
                    alreadyPurged: alreadyPurged,
                    verb: self.dryRun ? "would be purged (dry run)" : "purged"
                )
            }
            if !complete { throw ExitCode.failure }
        }
    }
}

// MARK: - Helpers

extension DLQ {
    /// Exit status for a dead letter id that is malformed or names no letter (EX_DATAERR).
    static let badID = ExitStatus.dataError.exitCode

    /// A dead letter id, or exit 65 with the reason.
    static func parseID(_ text: String, layout: PipelineLayout) throws -> DeadLetterID {
        do {
            return try DeadLetterID(parsing: text, layout: layout)
        } catch {
            throw fail(error.description, code: DLQ.badID)
        }
    }

    /// The letters named by `ids` (every one must exist, else exit 65), or those the filters select.
    static func selectLetters(
        ids: [String],
        filters: DeadLetterFilterOptions,
        includingPurged: Bool,
        queue: DeadLetterQueue
    ) async throws -> [DeadLetter] {
        guard ids.isEmpty else {
            let named = try await queue.letters(named: try ids.map { try DLQ.parseID($0, layout: queue.layout) })
            if let missing = named.missing.first {
                throw fail("no dead letter \(missing): nothing was sent", code: DLQ.badID)
            }
            return named.letters
        }
        var filter = try filters.filter(layout: queue.layout, nowMilliseconds: Int64(JobID.nowMilliseconds()))
        filter.includesPurged = includingPurged
        return try await queue.list(filter).letters
    }

    /// Prints what a purge hid and what it could not; returns whether every selected letter is hidden.
    static func reportPurge(_ plan: DeadLetterPurge, alreadyPurged: Int, verb: String) -> Bool {
        print(plan.text(alreadyPurged: alreadyPurged, verb: verb))
        guard let reason = plan.blockedReason else { return true }
        var standardError = StandardError()
        print("marquee: " + reason, to: &standardError)
        return false
    }
}
