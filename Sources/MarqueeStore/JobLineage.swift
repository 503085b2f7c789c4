public import MarqueeCore
import MarqueeJSON

/// The jobs of one lineage tree as `job_outcomes` holds them: each job's latest outcome (docs/store.md,
/// "Lineage"), for `marquee job` (docs/job.md).
public struct JobLineage: Sendable, Hashable {
    /// The job asked about.
    public var jobID: JobID
    /// The root of its tree: the `root_id` of the job's row, or the job itself when only jobs it is the root of
    /// have rows; `nil` when the store knows nothing of it.
    public var rootID: JobID?
    /// The rows read, oldest outcome first: every job under the root, or, when the tree has more than the limit,
    /// the path from the root down to the job and the job's children (at most the limit of them).
    public var outcomes: [JobOutcome]
    /// How many jobs the store holds under the root.
    public var total: Int

    /// - Parameters:
    ///   - jobID: The job asked about.
    ///   - rootID: The root of its tree, `nil` when the store knows nothing of it.
    ///   - outcomes: The rows read.
    ///   - total: How many jobs the store holds under the root.
    public init(jobID: JobID, rootID: JobID?, outcomes: [JobOutcome], total: Int) {
        self.jobID = jobID
        self.rootID = rootID
        self.outcomes = outcomes
        self.total = total
    }

    /// Whether every job the store holds under the root was read.
    public var isWhole: Bool { self.outcomes.count >= self.total }

    /// The most rows ``Store/jobLineage(of:limit:)`` reads whole, unless told otherwise.
    public static let defaultLimit = 500
    /// The largest limit ``Store/jobLineage(of:limit:)`` accepts.
    public static let maximumLimit = 10_000
    /// The longest path from a root down to a job that is followed (a parent loop in damaged data ends there).
    static let maximumDepth = 1000
}

extension Store {
    /// The lineage tree of any job in it: its root, then the whole tree under the root when it has at most `limit`
    /// jobs, else the path from the root down to the job and the job's children (at most `limit` of them).
    ///
    /// Reads only, with one statement per step (the job's row, the tree's size, its rows; or one lookup per level
    /// of the path), each through an index (`job_id`, `root_id`, `parent_id`). A job the store has no row for but
    /// is the root of other rows (its own outcome not indexed yet) is found as that tree's root.
    ///
    /// - Parameters:
    ///   - id: Any job of the tree.
    ///   - limit: The most rows read whole (1 to ``JobLineage/maximumLimit``).
    /// - Returns: The lineage; its ``JobLineage/rootID`` is `nil` when the store knows nothing of `id`.
    /// - Throws: ``StoreError`` `invalidQuery` when `limit` is out of range; `unavailable` when the store cannot be
    ///   read.
    public func jobLineage(of id: JobID, limit: Int = JobLineage.defaultLimit) async throws -> JobLineage {
        guard (1...JobLineage.maximumLimit).contains(limit) else {
            throw StoreError(.invalidQuery, "the limit must be from 1 to \(JobLineage.maximumLimit), not \(limit)")
        }
        let asked = try await self.outcomes(where: "job_id = ?", [.text(id.rawValue)])
        var rootID = asked.first?.rootID
        if rootID == nil {
            let rows = try await self.query(
                "SELECT 1 FROM job_outcomes WHERE root_id = ? LIMIT 1",
                [.text(id.rawValue)]
            )
            if !rows.isEmpty { rootID = id }
        }
        guard let rootID else { return JobLineage(jobID: id, rootID: nil, outcomes: [], total: 0) }
        let total = Int(
            try await self.query("SELECT COUNT(*) FROM job_outcomes WHERE root_id = ?", [.text(rootID.rawValue)])
                .first?.first?.int ?? 0
        )
        if total <= limit {
            let outcomes = try await self.outcomes(
                where: "root_id = ?",
                [.text(rootID.rawValue)],
                suffix: "ORDER BY fetched_at, job_id"
            )
            return JobLineage(jobID: id, rootID: rootID, outcomes: outcomes, total: total)
        }
        // Too many to read whole: the path up from the job to the root, then the job's children.
        var path: [JobOutcome] = asked
        var seen: Set<JobID> = [id]
        var next = asked.first?.parentID ?? (id == rootID ? nil : rootID)
        while let parent = next, !seen.contains(parent), path.count < JobLineage.maximumDepth {
            seen.insert(parent)
            let rows = try await self.outcomes(where: "job_id = ?", [.text(parent.rawValue)])
            path += rows
            // A missing parent ends the walk; the root is still read when it has a row.
            next = rows.first?.parentID ?? (parent == rootID ? nil : rootID)
        }
        let children = try await self.outcomes(
            where: "parent_id = ?",
            [.text(id.rawValue)],
            suffix: "ORDER BY fetched_at, job_id LIMIT \(limit)"
        )
        var outcomes = Array(path.reversed())
        var included = Set(outcomes.map(\.jobID))
        for child in children where included.insert(child.jobID).inserted { outcomes.append(child) }
        return JobLineage(jobID: id, rootID: rootID, outcomes: outcomes, total: total)
    }

    /// The rows of `job_outcomes` that match `condition` (with `?` placeholders), as outcomes.
    private func outcomes(
        where condition: String,
        _ binds: [SQLValue],
        suffix: String = ""
    ) async throws
        -> [JobOutcome]
    {
        let rows = try await self.query(
            """
            SELECT job_id, root_id, parent_id, stage, kind, attempt, outcome, tier, error_kind, error,
                   CAST(outputs AS TEXT), CAST(spawned AS TEXT), source, fetched_at
              FROM job_outcomes WHERE \(condition) \(suffix)
            """,
            binds
        )
        return rows.compactMap(Self.outcome(row:))
    }

    /// One row of ``outcomes(where:_:suffix:)``. The store checked every record before writing it
    /// (``JobOutcome/decode(_:)``), so the columns agree; a value out of shape is read as near as it goes.
    static func outcome(row: [SQLValue]) -> JobOutcome? {
        guard row.count >= 14, let id = row[0].text, let root = row[1].text else { return nil }
        let error = row[9].text ?? ""
        let outcome: JobOutcome.Outcome =
            switch row[6].text {
            case "retried": .retried(tier: Int(row[7].int ?? 0), error: error)
            case "dead-lettered":
                .deadLettered(row[8].text.flatMap(Envelope.ErrorKind.init(rawValue:)) ?? .permanent, error: error)
            default: .done
            }
        var outputs: [String: Int] = [:]
        if let text = row[10].text, case .object(let object)? = try? JSONValue.parse(Array(text.utf8)) {
            for (stage, count) in object.dictionary {
                switch count {
                case .integer(let number): outputs[stage] = Int(number)
                case .number(let number): outputs[stage] = Int(exactly: number)
                default: continue
                }
            }
        }
        return JobOutcome(
            jobID: JobID(rawValue: id),
            rootID: JobID(rawValue: root),
            parentID: row[2].text.map(JobID.init(rawValue:)),
            stage: row[3].text ?? "",
            kind: row[4].text ?? "",
            attempt: Int(row[5].int ?? 1),
            outcome: outcome,
            outputs: outputs,
            spawned: Self.strings(json: row[11].text).map(JobID.init(rawValue:)),
            source: row[12].text ?? "",
            finishedAt: row[13].int ?? 0
        )
    }
}
