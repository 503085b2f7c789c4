import ArgumentParser
import MarqueeKafka
import MarqueeOperations
import MarqueeWorker

/// `marquee groups`: consumer groups in the idioms of `kafka-consumer-groups` (docs/groups.md). What the
/// commands compute and print (the describe report, the reset plan, their text) lives in `MarqueeOperations`
/// (`GroupReport`, `OffsetResetPlan`); this parses arguments, asks the cluster and prints.
struct Groups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "List and describe consumer groups; reset their committed offsets.",
        discussion: """
            The operations of kafka-consumer-groups, for any group of the cluster (the stages' groups are \
            <prefix><stage>, such as marquee.fetch, unless MARQUEE_GROUP_<STAGE> says otherwise).

            Examples:
              marquee groups list
              marquee groups describe marquee.fetch
              marquee groups reset-offsets marquee.fetch --to-datetime 2026-11-27T06:00:00Z
              marquee groups reset-offsets marquee.fetch --topic marquee.fetch:0,2 --to-latest
              marquee groups reset-offsets marquee.records --shift-by -100 --execute

            Exit status: 0 done; 1 another failure; 64 bad arguments (or a topic, partition or group that gives \
            nothing to reset); 69 no broker answered; 75 --execute refused because the group has members; \
            76 the broker refused a request.
            """,
        subcommands: [List.self, Describe.self, ResetOffsets.self]
    )
}

// MARK: - list

extension Groups {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the consumer groups of the cluster with their state.",
            discussion: """
                STATE is the coordinator's: Stable (members consuming), PreparingRebalance or \
                CompletingRebalance (members joining or leaving), Empty (no members; committed offsets kept), \
                Dead (nothing left). TYPE is "simple" for a group that only stores offsets (never had members). \
                --json prints an array of {group, state, simple}.

                Examples:
                  marquee groups list
                  marquee groups list --json | jq -r '.[] | select(.state == "Empty") | .group'

                Exit status: 0; 64 bad arguments; 69 no broker answered; 76 the broker refused the request.
                """
        )

        @OptionGroup var kafka: KafkaOptions

        @Flag(name: .long, help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            try await reportingKafkaErrors {
                let admin = try self.kafka.makeAdmin()
                let groups = GroupListing.listings(try await admin.listGroups())
                if self.json { return try printJSON(groups) }
                print(GroupListing.text(groups))
            }
        }
    }
}

// MARK: - describe

extension Groups {
    struct Describe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a group's state, members and, per partition, committed offset, end offset and lag.",
            discussion: """
                As kafka-consumer-groups --describe: the state and each member (MEMBER-ID, HOST, CLIENT-ID and the \
                partitions assigned to it), then a line per partition the group committed on or has assigned: \
                CURRENT-OFFSET (committed), LOG-END-OFFSET, LAG (their difference; - when either is unknown) and \
                the CLIENT-ID of the member that owns it. A group the broker does not know is reported as such \
                (no members, no offsets), not as an error. --json prints one object (docs/groups.md).

                Examples:
                  marquee groups describe marquee.fetch
                  marquee groups describe marquee.images --json | jq '.partitions[] | select(.lag > 0)'

                Exit status: 0; 64 bad arguments; 69 no broker answered; 76 the broker refused a request.
                """
        )

        @OptionGroup var kafka: KafkaOptions

        @Argument(help: ArgumentHelp("The consumer group.", valueName: "group"))
        var group: String

        @Flag(name: .long, help: "Print JSON instead of tables.")
        var json = false

        func validate() throws {
            guard !self.group.isEmpty else { throw ValidationError("the group name is empty") }
        }

        func run() async throws {
            try await reportingKafkaErrors {
                let admin = try self.kafka.makeAdmin()
                let report = try await GroupReport.read(self.group, admin: admin)
                if self.json { return try printJSON(report) }
                print(report.text)
            }
        }
    }
}

// MARK: - reset-offsets

extension Groups {
    struct ResetOffsets: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-offsets",
            abstract: "Plan, and with --execute commit, new offsets for a group without members.",
            discussion: """
                Exactly one mode: --to-earliest (first retained offset), --to-latest (end offset), \
                --to-datetime T (first offset whose message is from T or later; the end offset where none is), \
                --to-offset N, --shift-by N (the committed offset plus N; negative reads messages again), or \
                --from-group G (the offsets group G committed: a renamed group keeps its place). \
                As kafka-consumer-groups does, a new offset outside a partition's range is moved to its edge \
                (the plan marks it "(first)" or "(end)"; "clamped" in --json).

                Which partitions: each --topic T (every partition) or T:0,2,5 (those), repeatable; without \
                --topic, every partition the group committed on.

                By default it prints the plan (GROUP, TOPIC, PARTITION, CURRENT-OFFSET, NEW-OFFSET, CHANGE) and \
                changes nothing. --execute commits the plan, and refuses (exit 75) while the group has members: \
                stop its workers first, or they would go on from their own positions. --json prints the plan \
                as one object with "executed" (docs/groups.md).

                Examples:
                  marquee groups reset-offsets marquee.fetch --to-latest
                  marquee groups reset-offsets marquee.fetch --to-earliest --execute
                  marquee groups reset-offsets marquee.images --to-datetime 2026-11-27T15:00:00+09:00
                  marquee groups reset-offsets marquee.records --topic marquee.records:0,2 --shift-by -50
                  marquee groups reset-offsets marquee.fetch --topic marquee.fetch:3 --to-offset 1200 --json
                  marquee groups reset-offsets marquee.fetch --from-group marquee.fetch --execute

                Exit status: 0 planned, or applied with --execute; 1 another failure (the offsets read back \
                differ from the plan); 64 bad arguments, a topic or partition the cluster lacks, or nothing to \
                reset; 69 no broker answered; 75 --execute refused: the group has members; 76 the broker refused \
                a request.
                """
        )

        @OptionGroup var kafka: KafkaOptions

        @Argument(help: ArgumentHelp("The consumer group.", valueName: "group"))
        var group: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                "A topic, or some of its partitions as topic:0,2,5. Repeatable.",
                discussion: "Default: every partition the group committed on.",
                valueName: "topic[:partitions]"
            )
        )
        var topic: [String] = []

        @Flag(name: .customLong("to-earliest"), help: "Reset to each partition's first retained offset.")
        var toEarliest = false

        @Flag(name: .customLong("to-latest"), help: "Reset to each partition's end offset (skip everything there).")
        var toLatest = false

        @Option(
            name: .customLong("to-datetime"),
            help: ArgumentHelp(
                "Reset to the first offset whose message is from this time or later.",
                discussion: "ISO 8601 with its zone: 2026-11-27T06:00:00Z, 2026-11-27T15:00:00+09:00.",
                valueName: "time"
            )
        )
        var toDatetime: String?

        @Option(
            name: .customLong("to-offset"),
            parsing: .unconditional,
            help: ArgumentHelp("Reset to this offset.", valueName: "N")
        )
        var toOffset: Int64?

        @Option(
            name: .customLong("shift-by"),
            parsing: .unconditional,
            help: ArgumentHelp("Move each committed offset by N (negative: back).", valueName: "N")
        )
        var shiftBy: Int64?

        @Option(
            name: .customLong("from-group"),
            help: ArgumentHelp(
                "Reset to the offsets another group committed (a renamed group keeps its place).",
                discussion: "Without --topic: every partition that group committed on.",
                valueName: "group"
            )
        )
        var fromGroup: String?

        @Flag(name: .long, help: "Commit the plan (only while the group has no members).")
        var execute = false

        @Flag(
            name: .customLong("dry-run"),
            help: "Only print the plan (the default; for kafka-consumer-groups' habit)."
        )
        var dryRun = false

        @Flag(name: .long, help: "Print the plan as JSON.")
        var json = false

        func validate() throws {
            guard !self.group.isEmpty else { throw ValidationError("the group name is empty") }
            guard !(self.execute && self.dryRun) else { throw ValidationError("--execute and --dry-run contradict") }
            do {
                _ = try self.mode()
                _ = try self.selections()
            } catch {
                throw ValidationError(error.reason)
            }
        }

        func mode() throws(OperationsError) -> OffsetResetMode {
            try OffsetResetMode.choosing(
                earliest: self.toEarliest,
                latest: self.toLatest,
                dateTime: self.toDatetime,
                offset: self.toOffset,
                shiftBy: self.shiftBy,
                fromGroup: self.fromGroup
            )
        }

        func selections() throws(OperationsError) -> [TopicSelection] {
            var selections: [TopicSelection] = []
            for text in self.topic { selections.append(try TopicSelection(parsing: text)) }
            return selections
        }

        func run() async throws {
            let mode = try self.mode()
            let selections = try self.selections()
            try await reportingKafkaErrors {
                let admin = try self.kafka.makeAdmin()
                let description =
                    try await admin.describeGroups([self.group])[self.group]
                    ?? KafkaConsumerGroupDescription(group: self.group, state: .dead, members: [])
                let refusal = OffsetResetPlan.refusal(description)
                if self.execute, let refusal {
                    throw fail(refusal, code: Groups.groupHasMembers)
                }
                let committed = try await admin.committedOffsets(group: self.group)
                let plan: OffsetResetPlan
                do {
                    plan = try await OffsetResetPlan.reading(
                        group: self.group,
                        mode: mode,
                        selections: selections,
                        committed: committed,
                        admin: admin
                    )
                } catch let error as OperationsError where error.code == .offsetReset {
                    throw fail(error.reason, code: ExitStatus.usage.exitCode)
                }
                if selections.isEmpty && !self.json {
                    print("No --topic: every partition group '\(self.fromGroup ?? self.group)' committed on.")
                    print("")
                }
                guard self.execute else {
                    if self.json { return try printJSON(OffsetResetPlan.Output(plan: plan, executed: false)) }
                    print(plan.table)
                    print("")
                    print("Nothing changed; add --execute to apply.")
                    if let refusal { print("Note: --execute would refuse now: \(refusal).") }
                    return
                }
                try await admin.commitOffsets(group: self.group, plan.offsets)
                // Read back what the broker holds now, so "applied" is what it says, not what was sent.
                let now = try await admin.committedOffsets(group: self.group, partitions: plan.rows.map(\.partition))
                let differing = plan.rows.filter { now[$0.partition] != .some($0.new) }
                if self.json {
                    try printJSON(OffsetResetPlan.Output(plan: plan, executed: differing.isEmpty))
                } else {
                    print(plan.table)
                    print("")
                    let count = plan.rows.count
                    print("Applied: group '\(self.group)' reset on \(count) partition\(count == 1 ? "" : "s").")
                }
                guard differing.isEmpty else {
                    let what = differing.map { row in
                        let held = (now[row.partition] ?? nil).map(String.init) ?? "none"
                        return "\(row.partition) is at \(held), not \(row.new)"
                    }
                    throw fail(
                        "the committed offsets differ from the plan: " + what.joined(separator: "; "),
                        code: ExitStatus.failure.exitCode
                    )
                }
            }
        }
    }
}

// MARK: - Helpers

extension Groups {
    /// `--execute` refused while the group has members (EX_TEMPFAIL: try again once its workers are stopped).
    static let groupHasMembers = ExitStatus.temporaryFailure.exitCode
}
