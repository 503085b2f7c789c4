public import MarqueeCore

/// How far the jobs of a crawl have come, from the job-outcome lineage (`job_outcomes`, docs/store.md).
///
/// A crawl is finished when every job it is known to consist of — its roots and every job a finished job
/// spawned — finished too (done or dead-lettered) and none is waiting in a retry tier.
public struct LineageProgress: Sendable, Hashable, Encodable {
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

    public init() {}

    /// Every known job finished and none waits for a retry. (A job run twice sends its outputs under the same
    /// ids, and its row keeps what each run spawned, so `finished` does not exceed `expected` in practice; the
    /// comparison tolerates it.)
    public var isComplete: Bool { self.retrying == 0 && self.finished >= self.expected && self.expected > 0 }
}

extension Store {
    /// The lineage of the crawls under `roots` (`nil`: every job the store knows).
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
        return progress
    }
}
