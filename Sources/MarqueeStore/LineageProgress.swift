public import MarqueeCore

/// How far the jobs of a crawl have come, from the job-outcome lineage (`job_outcomes`, docs/store.md).
///
/// A crawl is finished when every job it is known to consist of — its roots and every job a finished job
/// spawned — finished too (done or dead-lettered) and none is waiting in a retry tier.
public struct LineageProgress: Sendable, Hashable {
    /// Root jobs with an outcome.
    public var roots = 0
    /// Jobs known so far: the roots asked about (or with an outcome) plus everything any run of a job spawned
    /// (`job_outcomes.spawned` accumulates over a job's runs).
    public var expected = 0
    /// Jobs done or dead-lettered.
    public var finished = 0
    public var deadLettered = 0
    /// Jobs whose latest outcome is a retry: they will run again.
    public var retrying = 0
    /// Known jobs without a final outcome, counted one by one once the counts above say every job finished:
    /// `finished` also counts jobs no parent names (a job run twice that spawned other ids the second time), so
    /// the counts alone could hide a job that never ran. `nil` while the counts say work is left.
    public var unfinished: Int?
    /// One of the ``unfinished`` jobs (the smallest id), to look up with `marquee job`.
    public var firstUnfinished: JobID?

    public init() {}

    /// Whether the counts say every known job finished and none waits for a retry.
    public var countsSayComplete: Bool { self.retrying == 0 && self.finished >= self.expected && self.expected > 0 }

    /// Every known job finished and none waits for a retry: the counts say so, and no known job is without a final
    /// outcome.
    public var isComplete: Bool { self.countsSayComplete && self.unfinished == 0 }
}

extension Store {
    /// The lineage of the crawls under `roots` (`nil`: every job the store knows).
    ///
    /// One statement of counts; once they say every job finished, a second one that checks each known job (the
    /// spawned ids and the roots) for a final outcome.
    ///
    /// - Parameter roots: The root job ids `marquee enqueue` printed; roots without an outcome yet count as
    ///   expected and unfinished.
    public func lineageProgress(roots: [JobID]? = nil) async throws -> LineageProgress {
        let dialect = self.engine.dialect
        let filter: String
        var binds: [SQLValue] = []
        if let roots {
            let list = "[" + roots.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]"
            binds = [.text(list)]
            filter =
                dialect == .postgres
                ? "root_id IN (SELECT value FROM json_array_elements_text($1::json))"
                : "root_id IN (SELECT value FROM json_each(?1))"
        } else {
            filter = "TRUE"
        }
        let length = dialect == .postgres ? "jsonb_array_length(spawned)" : "json_array_length(spawned)"
        let sql = """
            SELECT
              COUNT(*) FILTER (WHERE parent_id IS NULL),
              COUNT(*) FILTER (WHERE outcome IN ('done', 'dead-lettered')),
              COUNT(*) FILTER (WHERE outcome = 'dead-lettered'),
              COUNT(*) FILTER (WHERE outcome = 'retried'),
              COALESCE(SUM(\(length)), 0)
            FROM job_outcomes WHERE \(filter)
            """
        let row = try await self.engine.read(sql, binds).first ?? []
        func value(_ index: Int) -> Int { index < row.count ? Int(row[index].int ?? 0) : 0 }
        var progress = LineageProgress()
        progress.roots = value(0)
        progress.finished = value(1)
        progress.deadLettered = value(2)
        progress.retrying = value(3)
        progress.expected = max(roots?.count ?? 0, progress.roots) + value(4)
        if progress.countsSayComplete {
            // The spawned ids and the roots asked about, each once, that have no final outcome.
            let spawnedIDs =
                dialect == .postgres
                ? "SELECT jsonb_array_elements_text(spawned) AS id FROM job_outcomes WHERE \(filter)"
                : "SELECT j.value AS id FROM job_outcomes, json_each(job_outcomes.spawned) AS j WHERE \(filter)"
            let askedRoots =
                roots == nil
                ? ""
                : dialect == .postgres
                    ? " UNION SELECT value FROM json_array_elements_text($1::json)"
                    : " UNION SELECT value FROM json_each(?1)"
            let unfinished =
                try await self.engine.read(
                    """
                    WITH known AS (\(spawnedIDs)\(askedRoots))
                    SELECT COUNT(*), MIN(id) FROM known
                     WHERE NOT EXISTS (SELECT 1 FROM job_outcomes o
                                        WHERE o.job_id = known.id AND o.outcome IN ('done', 'dead-lettered'))
                    """,
                    binds
                ).first ?? []
            progress.unfinished = unfinished.first.flatMap { $0.int }.map { Int($0) } ?? 0
            progress.firstUnfinished = unfinished.count > 1 ? unfinished[1].text.map(JobID.init(rawValue:)) : nil
        }
        return progress
    }
}
