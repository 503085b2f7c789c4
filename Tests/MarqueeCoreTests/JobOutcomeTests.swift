import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct JobOutcomeTests {
    static let root = JobID(rawValue: "01HZY0000000000000000ROOT0")
    static let job = JobID(rawValue: "01HZY00000000000000000JOB1")

    static func outcome(
        _ outcome: JobOutcome.Outcome,
        outputs: [String: Int] = [:],
        spawned: [JobID] = []
    ) -> JobOutcome {
        JobOutcome(
            jobID: Self.job,
            rootID: Self.root,
            parentID: Self.root,
            stage: "fetch",
            kind: "tmdb.list",
            attempt: 2,
            outcome: outcome,
            outputs: outputs,
            spawned: spawned,
            source: "marquee.fetch.retry.1/0/17",
            finishedAt: 1_700_000_000_123
        )
    }

    static let everyOutcome: [JobOutcome] = [
        Self.outcome(
            .done,
            outputs: ["fetch": 2, "images": 1, "records": 10],
            spawned: ["01HZY0000000000000000CHLD1", "01HZY0000000000000000CHLD2", "01HZY0000000000000000CHLD3"].map(
                JobID.init(rawValue:)
            )
        ),
        Self.outcome(.done),
        Self.outcome(.retried(tier: 2, error: "HTTP 503 from api.themoviedb.org")),
        Self.outcome(.deadLettered(.transient, error: "connection reset")),
        Self.outcome(.deadLettered(.permanent, error: "HTTP 404: movie 550 does not exist")),
        Self.outcome(.deadLettered(.poison, error: "field 'page': expected an integer from 1 to 500, got -3")),
        // An upstream's message as sent: quotes, a newline, a tab, non-ASCII, and empty text.
        Self.outcome(.deadLettered(.permanent, error: "bad \"query\"\n\tline 2: 기생충")),
        Self.outcome(.retried(tier: 1, error: "")),
    ]

    @Test(arguments: everyOutcome)
    func survivesARoundTripThroughItsRecordBytes(outcome: JobOutcome) throws {
        let record = try Record.decode(outcome.record.encoded())
        #expect(record.kind == .jobOutcome)
        #expect(record.key == Self.job.rawValue)
        #expect(record.dedupeKey == "job.outcome:\(Self.job.rawValue)")
        #expect(record.fetchedAt == 1_700_000_000_123)
        #expect(try JobOutcome.decode(record) == outcome)
        #expect(PayloadKind.peek(record.encoded()) == "job.outcome")
    }

    /// The stage writes each outcome's record directly (`encodedRecord()`), without building `record`: the same
    /// bytes, and the same Kafka key.
    @Test(
        arguments: everyOutcome + [
            JobOutcome(
                jobID: Self.job,
                rootID: Self.job,
                parentID: nil,
                stage: "images",
                kind: "image",
                attempt: 0,
                outcome: .deadLettered(.permanent, error: String(repeating: "é\u{1}\\", count: 600)),
                outputs: ["records": 1, "fetch": 0, "a.b": 3, "images": 12],
                spawned: [],
                source: "t/1/2",
                finishedAt: 0
            )
        ]
    )
    func isWrittenDirectlyAsItsRecordEncodes(outcome: JobOutcome) {
        #expect(outcome.encodedRecord() == outcome.record.encoded())
        #expect(outcome.recordKey == outcome.record.dedupeKey)
    }

    @Test func everyFieldIsPresentAndNullWhereItDoesNotApply() {
        let root = JobOutcome(
            envelope: Envelope.root(id: Self.root),
            stage: "fetch",
            kind: "unknown",
            outcome: .done,
            source: "marquee.fetch/1/0",
            finishedAt: 1_700_000_000_000
        )
        let expected =
            #"{"data":{"attempt":1,"error":null,"error_kind":null,"job_id":"01HZY0000000000000000ROOT0","#
            + #""kind":"unknown","outcome":"done","outputs":{},"parent_id":null,"root_id":"01HZY0000000000000000ROOT0","#
            + #""source":"marquee.fetch/1/0","spawned":[],"stage":"fetch","tier":null},"fetched_at":1700000000000,"#
            + #""key":"01HZY0000000000000000ROOT0","kind":"job.outcome","v":1}"#
        #expect(String(decoding: root.record.encoded(), as: UTF8.self) == expected)

        let retried = Self.outcome(.retried(tier: 3, error: "timeout")).record.data
        #expect(retried["outcome"] == .string("retried"))
        #expect(retried["tier"] == .integer(3))
        #expect(retried["error_kind"] == .string("transient"))
        #expect(retried["error"] == .string("timeout"))
        #expect(retried["parent_id"] == .string(Self.root.rawValue))
        let dead = Self.outcome(.deadLettered(.poison, error: "not JSON")).record.data
        #expect(dead["outcome"] == .string("dead-lettered"))
        #expect(dead["tier"] == .null)
        #expect(dead["error_kind"] == .string("poison"))
    }

    @Test func errorTextIsCutToTheHeaderBound() throws {
        let long = String(repeating: "é", count: 1500)
        let record = Self.outcome(.deadLettered(.permanent, error: long)).record
        #expect(record.data["error"] == .string(String(repeating: "é", count: 1000)))
        #expect(try JobOutcome.decode(record).outcome.error?.count == 1000)
    }

    /// Each damaged record, and the field its error must name.
    static let damaged: [(String, @Sendable (inout Record) -> Void)] = [
        ("kind", { $0.kind = .movie }),
        ("key", { $0.key = "someone-else" }),
        ("data.parent_id", { $0.data["parent_id"] = nil }),  // absent, not null
        ("data.attempt", { $0.data["attempt"] = .string("2") }),
        ("data.attempt", { $0.data["attempt"] = .integer(0) }),
        ("data.root_id", { $0.data["root_id"] = .integer(7) }),
        ("data.kind", { $0.data["kind"] = .string("drop table") }),
        ("data.outcome", { $0.data["outcome"] = .string("finished") }),
        ("data.outcome", { $0.data["tier"] = .integer(1) }),  // done with a tier
        ("data.outcome", { $0.data["error_kind"] = .string("transient") }),  // done with an error kind
        ("data.error_kind", { $0.data["error_kind"] = .string("fatal") }),
        ("data.error", { $0.data["error"] = .integer(503) }),
        ("data.outputs.fetch", { $0.data["outputs"] = .object(["fetch": .string("2")]) }),
        ("data.outputs", { $0.data["outputs"] = .array([]) }),
        ("data.spawned[1]", { $0.data["spawned"] = .array([.string("01HZY0000000000000000CHLD1"), .integer(2)]) }),
        ("data.spawned", { $0.data["spawned"] = .string("01HZY0000000000000000CHLD1") }),
        ("data.spawned", { $0.data["spawned"] = .array([.string("A"), .string("A")]) }),
        ("data.source", { $0.data["source"] = .string("marquee.fetch:0:17") }),
        ("data.surprise", { $0.data["surprise"] = .bool(true) }),
    ]

    @Test(arguments: 0..<damaged.count)
    func aDamagedRecordIsRefusedNamingTheField(index: Int) throws {
        let (field, damage) = Self.damaged[index]
        var record = Self.outcome(
            .done,
            outputs: ["fetch": 2, "records": 1],
            spawned: [JobID(rawValue: "01HZY0000000000000000CHLD1")]
        ).record
        #expect(throws: Never.self) { try JobOutcome.decode(record) }
        damage(&record)
        let error = try #require(throws: PayloadError.self) { try JobOutcome.decode(record) }
        #expect(error.field == field, "\(error)")
    }

    @Test func retriedNeedsATierAndATransientError() throws {
        var record = Self.outcome(.retried(tier: 1, error: "timeout")).record
        record.data["error_kind"] = .string("permanent")
        #expect(throws: PayloadError.self) { try JobOutcome.decode(record) }
        record = Self.outcome(.retried(tier: 1, error: "timeout")).record
        record.data["error"] = .null
        let error = try #require(throws: PayloadError.self) { try JobOutcome.decode(record) }
        #expect(error.field == "data.outcome")
    }
}
