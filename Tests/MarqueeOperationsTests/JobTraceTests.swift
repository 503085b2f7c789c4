import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import MarqueePipeline
import Testing

/// A row of `job_outcomes` as the store returns it.
private func outcome(
    _ id: String,
    root: String = "R",
    parent: String?,
    _ outcome: JobOutcome.Outcome = .done,
    kind: String = "tmdb.movie",
    attempt: Int = 1,
    spawned: [String] = [],
    at time: Int64
) -> JobOutcome {
    JobOutcome(
        jobID: JobID(rawValue: id),
        rootID: JobID(rawValue: root),
        parentID: parent.map(JobID.init(rawValue:)),
        stage: "fetch",
        kind: kind,
        attempt: attempt,
        outcome: outcome,
        outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count],
        spawned: spawned.map(JobID.init(rawValue:)),
        source: "marquee.fetch/0/\(time)",
        finishedAt: time
    )
}

/// A dead letter of `id` at `fetch/<partition>/<offset>`, as the stage writes it.
private func letter(
    _ id: String,
    root: String = "R",
    parent: String?,
    partition: Int32 = 2,
    offset: Int64 = 17,
    attempt: Int = 1,
    kind: Envelope.ErrorKind = .permanent,
    error: String = "HTTP 404: no such movie",
    at time: Int64
) -> DeadLetter {
    let headers = Envelope(
        id: JobID(rawValue: id),
        root: JobID(rawValue: root),
        parent: parent.map(JobID.init(rawValue:)),
        attempt: attempt,
        origin: "marquee.fetch/0/3",
        error: error,
        errorKind: kind
    ).kafkaHeaders
    let record = deadLetterRecord(
        partition: partition,
        offset: offset,
        value: movieJob.encoded(),
        headers: headers,
        timestamp: time
    )
    return DeadLetter(record: record, stage: "fetch")
}

private let second: Int64 = 1_763_800_000_000

@Suite struct JobTraceTests {
    /// R spawned A and B; A was retried twice and then done; B was dead-lettered.
    private static func crawl(asking id: String, letters: [DeadLetter]? = nil) -> JobTrace {
        JobTrace(
            requestedID: JobID(rawValue: id),
            rootID: JobID(rawValue: "R"),
            outcomes: [
                outcome("R", parent: nil, kind: "tmdb.list", spawned: ["B", "A"], at: second),
                outcome("A", parent: "R", attempt: 3, at: second + 9_000),
                outcome(
                    "B",
                    parent: "R",
                    .deadLettered(.permanent, error: "HTTP 404: no such movie"),
                    at: second + 2_000
                ),
            ],
            jobsInStore: 3,
            deadLetters: letters ?? [letter("B", parent: "R", at: second + 1_900)]
        )
    }

    @Test func aTreeShowsEachJobUnderItsParentInSpawnedOrderWithTheDeadLettersAddress() {
        let trace = Self.crawl(asking: "B")
        #expect(trace.isFound && trace.exitStatus == 0)
        #expect(trace.tops == [JobID(rawValue: "R")])
        #expect(
            trace.children[JobID(rawValue: "R")] == [JobID(rawValue: "B"), JobID(rawValue: "A")],
            "the parent's spawned order"
        )
        let b = try! #require(trace.requested)
        #expect(b.status == "dead-lettered" && b.deadLetters.map(\.id.description) == ["fetch/2/17"])
        #expect(b.queuedAt == second, "sent when its parent finished")
        #expect(b.firstAt == second && b.lastAt == second + 2_000)

        let lines = trace.text().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "job B: dead-lettered (tmdb.movie, fetch), dead letter fetch/2/17")
        #expect(lines.contains("root R"))
        let tree = lines.filter { $0.hasPrefix("R ") || $0.hasPrefix("├── ") || $0.hasPrefix("└── ") }
        #expect(tree.count == 3)
        guard tree.count == 3 else { return }
        #expect(tree[0].hasPrefix("R ") && tree[0].contains("tmdb.list") && tree[0].contains("done"))
        #expect(tree[1].hasPrefix("├── B ◀"))
        #expect(
            tree[1].contains("dead-lettered") && tree[1].contains("dlq fetch/2/17")
                && tree[1].contains("permanent: HTTP 404")
        )
        #expect(tree[1].contains("2025-11-22 08:26:40 → 08:26:42"))
        #expect(tree[2].hasPrefix("└── A ") && tree[2].contains("attempt 3") && !tree[2].contains("dlq"))
        #expect(lines.last == "3 jobs: 2 done, 1 dead-lettered; times in UTC")
    }

    @Test func deeperLevelsAreDrawnWithTheirParentsContinuationLines() {
        let trace = JobTrace(
            requestedID: JobID(rawValue: "R"),
            rootID: JobID(rawValue: "R"),
            outcomes: [
                outcome("R", parent: nil, spawned: ["A", "B"], at: second),
                outcome("A", parent: "R", spawned: ["A1"], at: second + 1),
                outcome("A1", parent: "A", at: second + 2),
                outcome("B", parent: "R", spawned: ["B1"], at: second + 3),
                outcome("B1", parent: "B", at: second + 4),
            ],
            jobsInStore: 5,
            deadLetters: []
        )
        let tree = trace.text().split(separator: "\n").map(String.init).filter { $0.contains("attempt 1") }
        #expect(tree.count == 5)
        guard tree.count == 5 else { return }
        #expect(tree[0].hasPrefix("R ◀"))
        #expect(tree[1].hasPrefix("├── A "))
        #expect(tree[2].hasPrefix("│   └── A1 "))
        #expect(tree[3].hasPrefix("└── B "))
        #expect(tree[4].hasPrefix("    └── B1 "))
    }

    @Test func aRetriedJobShowsItsTierAttemptsAndError() throws {
        let trace = JobTrace(
            requestedID: JobID(rawValue: "A"),
            rootID: JobID(rawValue: "R"),
            outcomes: [
                outcome("R", parent: nil, spawned: ["A"], at: second),
                outcome("A", parent: "R", .retried(tier: 2, error: "HTTP 503"), attempt: 2, at: second + 5_000),
            ],
            jobsInStore: 2,
            deadLetters: []
        )
        let a = try #require(trace.requested)
        #expect(a.status == "retried" && a.attempts == 2 && a.errorKind == "transient" && a.error == "HTTP 503")
        let line = try #require(trace.text().split(separator: "\n").first { $0.hasPrefix("└── A") })
        #expect(line.contains("retried") && line.contains("attempt 2") && line.contains("transient: HTTP 503"))
        let node = try #require(Self.nodes(trace.json).first { $0["job_id"] == .string("A") })
        #expect(node["outcome"] == .string("retried") && node["tier"] == .integer(2) && node["attempts"] == .integer(2))
    }

    @Test func aJobOnlyInTheDeadLetterTopicIsShownFromItsLetter() throws {
        // Dead-lettered before the indexer stored its outcome: the store knows nothing of it.
        let trace = JobTrace(
            requestedID: JobID(rawValue: "X"),
            rootID: nil,
            outcomes: [],
            jobsInStore: 0,
            deadLetters: [
                letter(
                    "X",
                    root: "RX",
                    parent: "PX",
                    offset: 40,
                    attempt: 4,
                    kind: .transient,
                    error: "timeout",
                    at: second
                ),
                letter("OTHER", root: "ELSEWHERE", parent: nil, offset: 41, at: second),
            ]
        )
        #expect(trace.isFound && trace.exitStatus == 0)
        #expect(trace.rootID == JobID(rawValue: "RX"), "the root its letter names")
        #expect(trace.jobs[JobID(rawValue: "OTHER")] == nil, "a letter of another tree is left out")
        let x = try #require(trace.requested)
        #expect(x.status == "dead-lettered" && x.attempts == 4 && x.kind == "tmdb.movie" && x.stage == "fetch")
        #expect(x.errorKind == "transient" && x.error == "timeout")
        // Its parent has no row: shown as pending, X under it.
        #expect(trace.jobs[JobID(rawValue: "PX")]?.status == JobTrace.Job.pending)
        #expect(trace.children[JobID(rawValue: "PX")] == [JobID(rawValue: "X")])
        #expect(trace.text().contains("└── X ◀"))
        #expect(trace.text().contains("dlq fetch/2/40"))
    }

    @Test func spawnedJobsWithoutAnOutcomeArePendingWhenTheWholeTreeWasRead() throws {
        let outcomes = [
            outcome("R", parent: nil, spawned: ["A", "B"], at: second), outcome("A", parent: "R", at: second + 1),
        ]
        let whole = JobTrace(
            requestedID: JobID(rawValue: "R"),
            rootID: JobID(rawValue: "R"),
            outcomes: outcomes,
            jobsInStore: 2,
            deadLetters: []
        )
        #expect(whole.jobs[JobID(rawValue: "B")]?.status == "pending")
        #expect(whole.statusCounts == ["done": 2, "pending": 1])
        #expect(whole.text().contains("3 jobs: 2 done, 1 pending"))
        // Cut (the store has more under the root than was read): a missing row proves nothing.
        // Its dead letters are those of the jobs read; the letters of jobs not read are counted.
        let cut = JobTrace(
            requestedID: JobID(rawValue: "A"),
            rootID: JobID(rawValue: "R"),
            outcomes: outcomes,
            jobsInStore: 1200,
            deadLetters: [
                letter("A", parent: "R", offset: 1, at: second), letter("Q", parent: "R", offset: 2, at: second),
                letter("Q2", parent: "Q", offset: 3, at: second),
            ]
        )
        #expect(cut.jobs[JobID(rawValue: "B")] == nil && cut.jobs[JobID(rawValue: "Q")] == nil)
        #expect(cut.requested?.deadLetters.map(\.id.description) == ["fetch/2/1"])
        #expect(cut.jobsNotRead == 1198 && cut.deadLettersNotShown == 2)
        #expect(cut.text().contains("1198 more jobs under the root not shown"))
        #expect(cut.text().contains("2 dead letters of jobs not shown under the root"))
        let json = Self.object(cut.json)
        #expect(json["jobs_in_store"] == .integer(1200) && json["jobs_not_shown"] == .integer(1198))
        #expect(json["dead_letters_not_shown"] == .integer(2))
    }

    @Test func parentLoopsAndMissingParentsEndAndShowEveryJobOnce() throws {
        // A and B name each other as parent (damaged data); C's parent has no row; R is fine.
        let trace = JobTrace(
            requestedID: JobID(rawValue: "A"),
            rootID: JobID(rawValue: "R"),
            outcomes: [
                outcome("R", parent: nil, at: second),
                outcome("A", parent: "B", at: second + 1),
                outcome("B", parent: "A", at: second + 2),
                outcome("C", parent: "GONE", at: second + 3),
                outcome("S", parent: "S", at: second + 4),
            ],
            jobsInStore: 5,
            deadLetters: []
        )
        // The root's tree first; then one top per piece: the loop's (A or B), the missing parent's, and S's.
        #expect(trace.tops.first == JobID(rawValue: "R") && trace.tops.count == 4)
        #expect(Set(trace.tops).isSuperset(of: ["R", "GONE", "S"].map(JobID.init(rawValue:))))
        #expect(trace.tops.contains(JobID(rawValue: "A")) != trace.tops.contains(JobID(rawValue: "B")))
        #expect(trace.children[JobID(rawValue: "GONE")] == [JobID(rawValue: "C")])
        #expect(trace.jobs[JobID(rawValue: "GONE")]?.status == "pending")
        let text = trace.text()
        for id in ["R", "A", "B", "C", "GONE", "S"] {
            let count = text.split(separator: "\n").filter { $0.drop { !$0.isLetter }.hasPrefix(id + " ") }.count
            #expect(count == 1, "\(id) once")
        }
        #expect(Self.nodes(trace.json).count == 6)
    }

    @Test func theExitStatusSaysWhatCouldBeShown() {
        let nothing = { (reading: JobTrace.DeadLetterReading, store: String?) in
            JobTrace(
                requestedID: JobID(rawValue: "Z"),
                rootID: nil,
                outcomes: [],
                jobsInStore: 0,
                deadLetters: [],
                deadLetterReading: reading,
                storeFailure: store
            )
        }
        #expect(nothing(.read, nil).exitStatus == 65)
        #expect(nothing(.read, nil).statusLine == "no job Z in the store or the dead-letter topics")
        #expect(nothing(.skipped, nil).exitStatus == 65)
        #expect(nothing(.failed("no broker", isUnreachable: true), nil).exitStatus == 69)
        #expect(nothing(.read, "the store at sqlite:x did not answer").exitStatus == 1)
        #expect(
            nothing(.read, "down").statusLine.hasPrefix(
                "no job Z in the dead-letter topics; the store could not be read: down"
            )
        )
        #expect(nothing(.skipped, nil).statusLine == "no job Z in the store; dead-letter topics not read (--no-dlq)")
        #expect(
            nothing(.failed("no broker", isUnreachable: true), "down").statusLine.hasPrefix(
                "job Z could not be looked up; the store could not be read: down; the dead-letter topics could not be read"
            )
        )
        #expect(
            nothing(.skipped, "down").statusLine
                == "job Z could not be looked up; the store could not be read: down; dead-letter topics not read (--no-dlq)"
        )
        #expect(nothing(.failed("no broker", isUnreachable: true), "down").exitStatus == 69)
        let shownWithoutDLQ = JobTrace(
            requestedID: JobID(rawValue: "R"),
            rootID: JobID(rawValue: "R"),
            outcomes: [outcome("R", parent: nil, at: second)],
            jobsInStore: 1,
            deadLetters: [],
            deadLetterReading: .failed("no broker answered", isUnreachable: true)
        )
        #expect(shownWithoutDLQ.exitStatus == 1)
        #expect(shownWithoutDLQ.text().hasSuffix("the dead-letter topics could not be read: no broker answered"))
        #expect(Self.object(shownWithoutDLQ.json)["dead_letters_read"] == .bool(false))
    }

    @Test func theJSONHasEveryFieldOfEveryNode() throws {
        let trace = Self.crawl(asking: "B")
        let json = try JSONValue.parse(trace.json.encoded())
        let top = Self.object(json)
        #expect(top["job_id"] == .string("B") && top["root_id"] == .string("R") && top["found"] == .bool(true))
        #expect(top["dead_letters_read"] == .bool(true) && top["store_error"] == .null)
        #expect(top["counts"] == .object(["dead-lettered": .integer(1), "done": .integer(2)]))
        let nodes = Self.nodes(json)
        #expect(nodes.map { $0["job_id"] } == [.string("R"), .string("B"), .string("A")])
        let keys: Set<String> = [
            "job_id", "parent_id", "root_id", "kind", "stage", "outcome", "attempts", "tier", "error_kind", "error",
            "source", "first_at", "last_at", "first_at_ms", "last_at_ms", "outputs", "spawned", "dead_letters",
            "requested", "children",
        ]
        for node in nodes { #expect(Set(node.dictionary.keys) == keys) }
        let b = nodes[1]
        #expect(
            b["requested"] == .bool(true) && b["outcome"] == .string("dead-lettered") && b["parent_id"] == .string("R")
        )
        guard case .array(let letters)? = b["dead_letters"], case .object(let first)? = letters.first else {
            Issue.record("no dead letter")
            return
        }
        #expect(first["id"] == .string("fetch/2/17") && first["topic"] == .string("marquee.fetch.dlq"))
        #expect(
            first["partition"] == .integer(2) && first["offset"] == .integer(17)
                && first["error_kind"] == .string("permanent")
        )
        #expect(b["first_at"] == .string("2025-11-22T08:26:40Z") && b["last_at_ms"] == .integer(second + 2_000))
        #expect(nodes[0]["spawned"] == .array([.string("B"), .string("A")]))
    }

    @Test func gatheringFollowsADeadLettersRootAndKeepsWhatOneSourceFound() async throws {
        // The store does not know X (its outcome not stored yet), but its letter names root R, which it knows.
        let rows = [outcome("R", parent: nil, spawned: ["X"], at: second)]
        var asked: [String] = []
        let trace = await JobTrace.gather(
            JobID(rawValue: "X"),
            lineage: { id in
                asked.append(id.rawValue)
                return id.rawValue == "R"
                    ? JobTrace.Lineage(rootID: JobID(rawValue: "R"), outcomes: rows, total: 1)
                    : JobTrace.Lineage(rootID: nil, outcomes: [], total: 0)
            },
            deadLetters: { jobs, roots in
                jobs.contains("X") || roots.contains("R") ? [letter("X", root: "R", parent: "R", at: second + 5)] : []
            }
        )
        #expect(asked == ["X", "R"])
        #expect(trace.rootID == JobID(rawValue: "R") && trace.tops == [JobID(rawValue: "R")])
        #expect(trace.children[JobID(rawValue: "R")] == [JobID(rawValue: "X")])
        #expect(trace.requested?.deadLetters.count == 1, "one letter, though both reads found it")
        #expect(trace.exitStatus == 0)

        struct Down: Error, CustomStringConvertible { var description: String { "the store is down" } }
        let storeDown = await JobTrace.gather(
            JobID(rawValue: "X"),
            lineage: { _ in throw Down() },
            deadLetters: { _, _ in [letter("X", root: "R", parent: "R", at: second)] }
        )
        #expect(storeDown.isFound && storeDown.storeFailure == "the store is down" && storeDown.exitStatus == 1)
        let brokerDown = await JobTrace.gather(
            JobID(rawValue: "R"),
            lineage: { _ in JobTrace.Lineage(rootID: JobID(rawValue: "R"), outcomes: rows, total: 1) },
            deadLetters: { _, _ in throw KafkaError(code: .brokerUnreachable, reason: "no broker answered within 10 s")
            }
        )
        #expect(brokerDown.isFound && brokerDown.exitStatus == 1)
        #expect(brokerDown.deadLetterReading == .failed("no broker answered within 10 s", isUnreachable: true))
        let skipped = await JobTrace.gather(
            JobID(rawValue: "R"),
            lineage: { _ in JobTrace.Lineage(rootID: JobID(rawValue: "R"), outcomes: rows, total: 1) },
            deadLetters: nil
        )
        #expect(
            skipped.deadLetterReading == .skipped && skipped.text().hasSuffix("dead-letter topics not read (--no-dlq)")
        )
    }

    @Test func timesAreWrittenInUTC() {
        #expect(JobTrace.format(milliseconds: 0) == "1970-01-01 00:00:00")
        #expect(JobTrace.format(milliseconds: second) == "2025-11-22 08:26:40")
        #expect(JobTrace.format(milliseconds: 951_782_400_000) == "2000-02-29 00:00:00")
        #expect(JobTrace.format(milliseconds: -1) == "1969-12-31 23:59:59")
    }

    // MARK: - Helpers

    private static func object(_ value: JSONValue) -> JSONObject {
        if case .object(let object) = value { return object }
        return JSONObject()
    }

    /// Every node of the JSON tree, depth first in the order shown.
    private static func nodes(_ json: JSONValue) -> [JSONObject] {
        var found: [JSONObject] = []
        func visit(_ value: JSONValue) {
            guard case .object(let node) = value else { return }
            found.append(node)
            if case .array(let children)? = node["children"] { children.forEach(visit) }
        }
        if case .array(let tree)? = Self.object(json)["tree"] { tree.forEach(visit) }
        return found
    }
}
