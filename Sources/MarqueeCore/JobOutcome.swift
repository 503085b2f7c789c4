import MarqueeJSON

/// What became of one job when a stage finished with it: the `job.outcome` record that lineage is built from
/// (the store's `job_outcomes` table).
///
/// A stage emits one each time a job finishes: it succeeded (``Outcome/done``), moved to a retry tier
/// (``Outcome/retried(tier:error:)``) or was parked in the dead-letter topic
/// (``Outcome/deadLettered(_:error:)``). A retried job emits one per attempt, so the last outcome of a
/// job id is where it ended. ``spawned`` names the child jobs it produced, each of which has outcomes of its own.
///
/// As a ``Record`` it is `{"kind": "job.outcome", "key": <job id>, "fetched_at": <finish time>, "data": {…}}`;
/// every data field is present, `null` where it does not apply (docs/records.md, "Lineage").

public struct JobOutcome: Hashable, Sendable {
    /// How the job finished.
    public enum Outcome: Hashable, Sendable {
        /// Succeeded: its outputs were produced.
        case done
        /// Failed transiently and moved to this retry tier (1-based), with the error it failed with.
        case retried(tier: Int, error: String)
        /// Parked in the dead-letter topic, for this kind of error.
        case deadLettered(Envelope.ErrorKind, error: String)

        /// The `outcome` field: `done`, `retried` or `dead-lettered`.
        public var name: String {
            switch self {
            case .done: "done"
            case .retried: "retried"
            case .deadLettered: "dead-lettered"
            }
        }

        /// The retry tier the job moved to, for ``retried(tier:error:)``.
        public var tier: Int? {
            guard case .retried(let tier, _) = self else { return nil }
            return tier
        }

        /// `transient` for a retry, the dead letter's kind, or `nil` when the job succeeded.
        public var errorKind: Envelope.ErrorKind? {
            switch self {
            case .done: nil
            case .retried: .transient
            case .deadLettered(let kind, _): kind
            }
        }

        /// The error text (as in the `marquee-error` header), or `nil` when the job succeeded.
        public var error: String? {
            switch self {
            case .done: nil
            case .retried(_, let error), .deadLettered(_, let error): error
            }
        }
    }

    /// The longest ``Outcome/error`` text kept (the `marquee-error` header's bound); longer text is cut.
    public static let maxErrorLength = 1000

    /// The job (`marquee-id`): the record's key.
    public var jobID: JobID
    /// The job an operator enqueued, at the root of this one's lineage.
    public var rootID: JobID
    /// The job that spawned this one, or `nil` for a root.
    public var parentID: JobID?
    /// The stage that ran it (`fetch`, `images`).
    public var stage: String
    /// The payload's kind (``PayloadKind/peek(_:)``: a known kind or `unknown`).
    public var kind: String
    /// The attempt that finished (1 on first delivery).
    public var attempt: Int
    public var outcome: Outcome
    /// Outputs produced, per target stage (`["fetch": 3, "records": 10]`); empty unless the job succeeded.
    public var outputs: [String: Int]
    /// The ids of the jobs among the outputs (those to stages other than `records`, where the outcome itself
    /// goes), as their envelopes carry them: each has outcomes of its own.
    public var spawned: [JobID]
    /// Where the job was read: `topic/partition/offset`.
    public var source: String
    /// When it finished, in milliseconds since the epoch (the record's `fetched_at`).
    public var finishedAt: Int64

    public init(
        jobID: JobID,
        rootID: JobID,
        parentID: JobID?,
        stage: String,
        kind: String,
        attempt: Int,
        outcome: Outcome,
        outputs: [String: Int] = [:],
        spawned: [JobID] = [],
        source: String,
        finishedAt: Int64
    ) {
        self.jobID = jobID
        self.rootID = rootID
        self.parentID = parentID
        self.stage = stage
        self.kind = kind
        self.attempt = attempt
        self.outcome = outcome
        self.outputs = outputs
        self.spawned = spawned
        self.source = source
        self.finishedAt = finishedAt
    }

    /// The outcome of the job `envelope` describes: its id, root, parent and attempt.
    public init(
        envelope: Envelope,
        stage: String,
        kind: String,
        outcome: Outcome,
        outputs: [String: Int] = [:],
        spawned: [JobID] = [],
        source: String,
        finishedAt: Int64
    ) {
        self.init(
            jobID: envelope.id,
            rootID: envelope.root,
            parentID: envelope.parent,
            stage: stage,
            kind: kind,
            attempt: envelope.attempt,
            outcome: outcome,
            outputs: outputs,
            spawned: spawned,
            source: source,
            finishedAt: finishedAt
        )
    }

    /// Every data field, each always present.
    static let fields = [
        "job_id", "root_id", "parent_id", "stage", "kind", "attempt", "outcome", "tier", "error_kind", "error",
        "outputs", "spawned", "source",
    ]

    /// The `job.outcome` record, keyed by the job id (its Kafka key is the record's `dedupeKey`,
    /// `job.outcome:<job id>`).
    public var record: Record {
        func nullable(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let data: JSONObject = [
            "job_id": .string(self.jobID.rawValue),
            "root_id": .string(self.rootID.rawValue),
            "parent_id": nullable(self.parentID?.rawValue),
            "stage": .string(self.stage),
            "kind": .string(self.kind),
            "attempt": .integer(Int64(self.attempt)),
            "outcome": .string(self.outcome.name),
            "tier": self.outcome.tier.map { .integer(Int64($0)) } ?? .null,
            "error_kind": nullable(self.outcome.errorKind?.rawValue),
            "error": nullable(self.outcome.error.map { String($0.prefix(Self.maxErrorLength)) }),
            "outputs": .object(JSONObject(self.outputs.mapValues { .integer(Int64($0)) })),
            "spawned": .array(self.spawned.map { .string($0.rawValue) }),
            "source": .string(self.source),
        ]
        return Record(kind: .jobOutcome, key: self.jobID.rawValue, fetchedAt: self.finishedAt, data: data)
    }

    /// ``record`` encoded (``Record/encoded()``), written field by field in sorted key order without building the
    /// record (the same bytes): every job of every stage sends one.
    public func encodedRecord() -> [UInt8] {
        var writer = JSONWriter.object(capacity: 400 + 40 * self.spawned.count)
        writer.key("data")
        writer.beginObject()
        writer.write("attempt", Int64(self.attempt))
        writer.write("error", self.outcome.error.map { String($0.prefix(Self.maxErrorLength)) })
        writer.write("error_kind", self.outcome.errorKind?.rawValue)
        writer.write("job_id", self.jobID.rawValue)
        writer.write("kind", self.kind)
        writer.write("outcome", self.outcome.name)
        writer.key("outputs")
        writer.beginObject()
        for stage in self.outputs.keys.sorted() {
            writer.key(stage)
            writer.write(integer: Int64(self.outputs[stage] ?? 0))
        }
        writer.endObject()
        writer.write("parent_id", self.parentID?.rawValue)
        writer.write("root_id", self.rootID.rawValue)
        writer.write("source", self.source)
        writer.key("spawned")
        writer.beginArray()
        for id in self.spawned { writer.write(string: id.rawValue) }
        writer.endArray()
        writer.write("stage", self.stage)
        writer.write("tier", self.outcome.tier.map(Int64.init))
        writer.endObject()
        writer.write("fetched_at", self.finishedAt)
        writer.write("key", self.jobID.rawValue)
        writer.write("kind", Record.Kind.jobOutcome.rawValue)
        writer.write("v", FetchJob.version)
        writer.endObject()
        return writer.finish()
    }

    /// The Kafka key of its record (``Record/dedupeKey``).
    public var recordKey: String { "\(Record.Kind.jobOutcome.rawValue):\(self.jobID.rawValue)" }

    /// Reads and checks a `job.outcome` record, as the store does before it writes one.
    ///
    /// Every field must be present (`null` where it does not apply) and of its type; the outcome must agree with
    /// `tier`, `error_kind` and `error` (a retry names its tier and is transient; a finished job has no error),
    /// and the key must be the job id. The error text may hold any characters (it is the upstream's message),
    /// up to ``maxErrorLength``.
    ///
    /// - Throws: A ``PayloadError`` naming the wrong field (`data.attempt`).
    public static func decode(_ record: Record) throws(PayloadError) -> JobOutcome {
        guard record.kind == .jobOutcome else {
            throw PayloadError(.unknownKind, field: "kind", "expected 'job.outcome', got '\(record.kind.rawValue)'")
        }
        if let missing = Self.fields.first(where: { record.data[$0] == nil }) {
            throw PayloadError(.missingField, field: "data.\(missing)", "required (null when it does not apply)")
        }
        var reader = try PayloadReader(.object(record.data), path: "data")
        let jobID = try reader.string("job_id", maxLength: 500)
        guard record.key == jobID else {
            throw PayloadError(
                .invalidField,
                field: "key",
                "expected the job id '\(jobID.prefix(80))', got '\(record.key.prefix(80))'"
            )
        }
        let rootID = try reader.string("root_id", maxLength: 500)
        let parentID = try reader.optionalString("parent_id", maxLength: 500)
        let stage = try reader.string("stage", maxLength: 64)
        let kind = try reader.string(
            "kind",
            maxLength: 64,
            check: { PayloadKind.known.contains($0) || $0 == PayloadKind.unknown },
            expected: "a known payload kind or 'unknown'"
        )
        let attempt = try reader.int("attempt", in: 1...1000)
        let name = try reader.string(
            "outcome",
            check: { ["done", "retried", "dead-lettered"].contains($0) },
            expected: "done, retried or dead-lettered"
        )
        let tier = try reader.optionalInt("tier", in: 1...100)
        let errorKind = try reader.optionalString(
            "error_kind",
            check: { Envelope.ErrorKind(rawValue: $0) != nil },
            expected: "transient, permanent or poison"
        ).flatMap(Envelope.ErrorKind.init(rawValue:))
        reader.ignore("error")
        let error: String?
        switch record.data["error"] {
        case .null, nil: error = nil
        case .string(let text) where text.count <= Self.maxErrorLength: error = text
        case .string:
            throw PayloadError(.invalidField, field: "data.error", "longer than \(Self.maxErrorLength) characters")
        case let value?:
            throw PayloadError(.invalidField, field: "data.error", "expected a string or null, got \(value.typeName)")
        }
        let outcome: Outcome
        switch (name, tier, errorKind, error) {
        case ("done", nil, nil, nil): outcome = .done
        case ("retried", let tier?, .transient, let error?): outcome = .retried(tier: Int(tier), error: error)
        case ("dead-lettered", nil, let kind?, let error?): outcome = .deadLettered(kind, error: error)
        default:
            throw PayloadError(
                .invalidField,
                field: "data.outcome",
                "'\(name)' does not agree with tier \(tier.map(String.init) ?? "null"), error_kind \(errorKind?.rawValue ?? "null") "
                    + "and error \(error == nil ? "null" : "text") (done: all null; retried: a tier, transient, an error; "
                    + "dead-lettered: no tier, an error kind and an error)"
            )
        }
        var outputs: [String: Int] = [:]
        for (target, count) in try reader.rawObject("outputs") {
            guard !target.isEmpty, target.count <= 64 else {
                throw PayloadError(.invalidField, field: "data.outputs", "expected stage names of 1 to 64 characters")
            }
            guard case .integer(let number) = count, (1...1_000_000).contains(number) else {
                let got = if case .integer(let number) = count { String(number) } else { count.typeName }
                throw PayloadError(
                    .invalidField,
                    field: "data.outputs.\(target.prefix(64))",
                    "expected a count from 1 to 1000000, got \(got)"
                )
            }
            outputs[target] = Int(number)
        }
        var spawned: [JobID] = []
        for (index, element) in try reader.rawArray("spawned").enumerated() {
            guard case .string(let id) = element, !id.isEmpty, id.count <= 500 else {
                throw PayloadError(
                    .invalidField,
                    field: "data.spawned[\(index)]",
                    "expected a job id, got \(element.typeName)"
                )
            }
            spawned.append(JobID(rawValue: id))
        }
        guard spawned.count <= outputs.values.reduce(0, +), Set(spawned).count == spawned.count else {
            throw PayloadError(
                .invalidField,
                field: "data.spawned",
                "\(spawned.count) ids for \(outputs.values.reduce(0, +)) outputs, or an id twice"
            )
        }
        let source = try reader.string(
            "source",
            maxLength: 500,
            check: Self.isSource,
            expected: "topic/partition/offset"
        )
        try reader.finish()
        return JobOutcome(
            jobID: JobID(rawValue: jobID),
            rootID: JobID(rawValue: rootID),
            parentID: parentID.map(JobID.init(rawValue:)),
            stage: stage,
            kind: kind,
            attempt: Int(attempt),
            outcome: outcome,
            outputs: outputs,
            spawned: spawned,
            source: source,
            finishedAt: record.fetchedAt
        )
    }

    /// `topic/partition/offset`: a topic name (which has no `/`) and two non-negative integers.
    static func isSource(_ value: String) -> Bool {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 3 && !parts[0].isEmpty && Int32(parts[1]).map { $0 >= 0 } == true
            && Int64(parts[2]).map { $0 >= 0 } == true
    }
}
