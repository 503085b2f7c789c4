import MarqueeCore
public import MarqueeJSON
import MarqueeKafka

// MARK: - JobTrace + JSON

extension JobTrace {
    /// The trace as one JSON object with snake_case keys: what `marquee job --json` prints (docs/job.md).
    ///
    /// Keys: `job_id` (asked about), `root_id`, `found`, `jobs_in_store`, `jobs_not_shown` (of the store's jobs
    /// under the root, those not read because the tree is over the limit), `dead_letters_not_shown` (the letters
    /// of those jobs), `dead_letters_read` (`true`, `false` when the topics could not be read, `null` with
    /// `--no-dlq`), `dead_letters_error`, `store_error`, `counts` (jobs by status) and `tree`: the root's tree,
    /// then any piece not reachable from it (``tops``). Each node: `job_id`, `parent_id`, `root_id`, `kind`,
    /// `stage`, `outcome` (`done`, `retried`, `dead-lettered`, `pending`), `attempts`, `tier`, `error_kind`,
    /// `error`, `source` (`topic/partition/offset` the outcome's run read it from), `first_at`, `last_at` (ISO
    /// 8601, UTC) with `first_at_ms`, `last_at_ms`, `outputs`, `spawned`, `dead_letters` (each `id` as
    /// `stage/partition/offset`, `topic`, `partition`, `offset`, `error_kind`, `error`, `attempt`, `time`,
    /// `purged`), `requested` and `children`; a node cut at ``maximumDepth`` has `children_not_shown`. `null`
    /// where a fact is unknown.
    public var json: JSONValue {
        var drawn: Set<JobID> = []
        func node(_ id: JobID, depth: Int) -> JSONValue? {
            guard let job = self.jobs[id], drawn.insert(id).inserted else { return nil }
            var object = Self.fields(of: job)
            let kids = self.children[id] ?? []
            if depth < Self.maximumDepth {
                object["children"] = .array(kids.compactMap { node($0, depth: depth + 1) })
            } else {
                object["children"] = .array([])
                object["children_not_shown"] = .integer(Int64(self.descendants(of: id).count))
            }
            return .object(object)
        }
        let tree = self.tops.compactMap { node($0, depth: 0) }
        var deadLettersRead = JSONValue.null
        var deadLettersError = JSONValue.null
        switch self.deadLetterReading {
        case .read: deadLettersRead = .bool(true)
        case .skipped: break
        case .failed(let reason, _):
            deadLettersRead = .bool(false)
            deadLettersError = .string(reason)
        }
        let counts = JSONObject(self.statusCounts.mapValues { .integer(Int64($0)) })
        return .object([
            "job_id": .string(self.requestedID.rawValue),
            "root_id": self.rootID.map { .string($0.rawValue) } ?? .null,
            "found": .bool(self.isFound),
            "jobs_in_store": .integer(Int64(self.jobsInStore)),
            "jobs_not_shown": .integer(Int64(self.jobsNotRead)),
            "dead_letters_not_shown": .integer(Int64(self.deadLettersNotShown)),
            "dead_letters_read": deadLettersRead,
            "dead_letters_error": deadLettersError,
            "store_error": self.storeFailure.map(JSONValue.string) ?? .null,
            "counts": .object(counts),
            "tree": .array(tree),
        ])
    }

    /// One node's facts, without its children.
    static func fields(of job: Job) -> JSONObject {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func integer(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
        func time(_ value: Int64?) -> JSONValue {
            value.map { .string(DeadLetterFilter.format(milliseconds: $0)) } ?? .null
        }
        let letters: [JSONValue] = job.deadLetters.map { letter in
            .object([
                "id": .string(letter.id.description),
                "topic": .string(letter.record.topic),
                "partition": .integer(Int64(letter.id.partition)),
                "offset": .integer(letter.id.offset),
                "error_kind": .string(letter.errorKind),
                "error": text(letter.error),
                "attempt": integer(letter.attempt),
                "time": time(letter.timestamp),
                "purged": .bool(letter.isPurged),
            ])
        }
        let outputs = job.outcome.map { outcome in
            JSONValue.object(JSONObject(outcome.outputs.mapValues { .integer(Int64($0)) }))
        }
        return [
            "job_id": .string(job.id.rawValue),
            "parent_id": text(job.parentID?.rawValue),
            "root_id": text(job.rootID?.rawValue),
            "kind": text(job.kind),
            "stage": text(job.stage),
            "outcome": .string(job.status),
            "attempts": integer(job.attempts),
            "tier": integer(job.outcome?.outcome.tier),
            "error_kind": text(job.errorKind),
            "error": text(job.error),
            "source": text(job.outcome.flatMap { $0.source.isEmpty ? nil : $0.source }),
            "first_at": time(job.firstAt),
            "last_at": time(job.lastAt),
            "first_at_ms": job.firstAt.map(JSONValue.integer) ?? .null,
            "last_at_ms": job.lastAt.map(JSONValue.integer) ?? .null,
            "outputs": outputs ?? .null,
            "spawned": job.outcome.map { .array($0.spawned.map { .string($0.rawValue) }) } ?? .null,
            "dead_letters": .array(letters),
            "requested": .bool(job.isRequested),
        ]
    }
}
