public import MarqueeCore

/// Which jobs each movie of a TMDB export makes.
public struct TMDBExportPlan: Sendable, Hashable {
    /// Which movies make jobs.
    public var filter: TMDBExportFilter
    /// A job per movie and language.
    public var languages: [String]
    /// `tmdb.movie` detail jobs (with ``follow``'s reviews and images); otherwise `tmdb.reviews` jobs.
    public var details: Bool
    /// What each detail job follows: reviews, posters, backdrops.
    public var follow: Follow

    /// A plan; with neither details nor reviews there is nothing to enqueue.
    ///
    /// - Throws: An ``OperationsError`` naming the flag at fault.
    public init(filter: TMDBExportFilter, languages: [String], follow: Follow) throws(OperationsError) {
        guard follow.details || follow.reviews else {
            throw OperationsError(.enqueue, "name what to fetch of each movie: --details (and --reviews, --images)")
        }
        guard !languages.isEmpty else { throw OperationsError(.enqueue, "name at least one language") }
        if let minimum = filter.minPopularity, !(minimum >= 0) || !minimum.isFinite {
            throw OperationsError(.enqueue, "--min-popularity must be a number from 0")
        }
        self.filter = filter
        self.languages = languages
        self.details = follow.details
        var following = follow
        following.details = false
        self.follow = following
        // Checked once with the fetch stage's own decoding, so no movie can make a job the worker refuses.
        _ = try EnqueueJobs.checked(self.jobs(for: 1))
    }

    /// The jobs of movie `id`.
    public func jobs(for id: Int64) -> [FetchJob] {
        self.languages.map { language in
            self.details
                ? FetchJob.tmdbMovie(id: id, language: language, follow: self.follow)
                : FetchJob.tmdbReviews(id: id, page: 1, language: language, follow: Follow())
        }
    }

    /// The plan in words, kept in the state file: a run resumes only with the same plan.
    public var fingerprint: String {
        var parts = [
            self.details ? "details" : "reviews", "languages=\(self.languages.joined(separator: ","))",
        ]
        if self.details && self.follow.reviews { parts.append("reviews") }
        if self.follow.images { parts.append("images") }
        if self.follow.backdrops { parts.append("backdrops") }
        if let minimum = self.filter.minPopularity { parts.append("min-popularity=\(minimum)") }
        if self.filter.includesAdult { parts.append("include-adult") }
        return parts.joined(separator: " ")
    }
}

/// How fast jobs may go out: a rate, and a bound on the fetch stage's backlog.
public struct EnqueuePacing: Sendable, Hashable {
    /// Jobs per second at most; 0 for no limit. Default: 50.
    public var rate: Double = 50
    /// Send nothing while the fetch group's lag (jobs waiting on its topics) would pass this; 0 for no bound.
    /// Default: 10,000.
    public var maxBacklog: Int = 10_000
    /// Jobs delivered (and the state file written) at a time, at most. Default: 500.
    public var batchSize: Int = 500
    /// How long to wait before asking the backlog again while it is over the bound. Default: 500 ms.
    public var backlogPoll: Duration = .milliseconds(500)

    public init(rate: Double = 50, maxBacklog: Int = 10_000) {
        self.rate = rate
        self.maxBacklog = maxBacklog
    }

    /// The batch size for the rate: about four batches a second when the rate is low, so the pace is smooth.
    var effectiveBatch: Int {
        self.rate > 0 ? max(1, min(self.batchSize, Int(self.rate / 4))) : self.batchSize
    }
}

/// Where a run of ``EnqueueTMDBExport`` is, for the progress line.
public struct TMDBExportProgress: Sendable, Hashable {
    /// The last line read.
    public var line: Int
    /// Jobs delivered by this run, and over every run of this export.
    public var jobs: Int
    public var totalJobs: Int
    /// Movies skipped by the filters, lines that were not movies (every run).
    public var filtered: Int
    public var bad: Int
    /// Bytes of the file read, and its size.
    public var bytesRead: Int64
    public var size: Int64
    /// Bytes read when this run started sending (a resumed run first reads past what was sent).
    public var startBytes: Int64
    /// Time since this run started.
    public var elapsed: Duration
    /// The fetch group's backlog when last asked, if a bound is set; and whether sending waits for it.
    public var backlog: Int?
    public var isWaitingForBacklog: Bool

    /// Jobs per second of this run.
    public var rate: Double {
        let seconds = Double(self.elapsed.components.seconds) + Double(self.elapsed.components.attoseconds) * 1e-18
        return seconds > 0 ? Double(self.jobs) / seconds : 0
    }

    /// The estimated time left, from the share of the file read since sending started; `nil` before it can
    /// tell.
    public var remaining: Duration? {
        let done = self.bytesRead - self.startBytes
        guard done > 0, self.size >= self.bytesRead, self.elapsed > .zero else {
            return nil
        }
        let left = Double(max(0, self.size - self.bytesRead))
        return self.elapsed * (left / Double(done))
    }

    /// `line 120,000  jobs 118,500 (1,234/s)  filtered 1,200  bad 0  42%  ETA 4m10s`.
    public var text: String {
        var parts = [
            "line \(TextFormat.grouped(self.line))",
            "jobs \(TextFormat.grouped(self.totalJobs)) (\(TextFormat.grouped(Int(self.rate.rounded())))/s)",
            "filtered \(TextFormat.grouped(self.filtered))",
            "bad \(TextFormat.grouped(self.bad))",
        ]
        if self.size > 0 { parts.append("\(Int(100 * self.bytesRead / self.size))%") }
        if let remaining = self.remaining { parts.append("ETA \(TextFormat.elapsed(remaining))") }
        if let backlog = self.backlog {
            parts.append((self.isWaitingForBacklog ? "waiting: backlog " : "backlog ") + TextFormat.grouped(backlog))
        }
        return parts.joined(separator: "  ")
    }
}

/// One run of `marquee enqueue tmdb-export`: reads an export line by line, makes each admitted movie's jobs,
/// delivers them in batches at the pace asked, and records after every delivered batch how far it got, so a
/// stopped run resumes where it stopped (``TMDBExportCheckpoint``).
///
/// A line that is not a movie (not JSON, no id) is reported with its number, counted and skipped: one damaged
/// line does not hold up a backfill of a million. More than ``maxBadLines`` of them stop the run (exit 65): that
/// is not an export. A file that ends inside its gzip stream stops the run after sending what was read.
public struct EnqueueTMDBExport {
    /// The plan of each movie's jobs.
    public var plan: TMDBExportPlan
    /// The pace.
    public var pacing: EnqueuePacing
    /// Bad lines tolerated before the run stops. Default: 100.
    public var maxBadLines = 100
    /// How often progress is reported. Default: 1 second.
    public var progressInterval: Duration = .seconds(1)

    public init(plan: TMDBExportPlan, pacing: EnqueuePacing) {
        self.plan = plan
        self.pacing = pacing
    }

    /// How a run ended.
    public enum Ending: Sendable, Hashable {
        /// Every line was read and its jobs delivered.
        case complete
        /// ``run(reader:checkpoint:statePath:send:backlog:shouldStop:progress:problem:)`` was asked to stop;
        /// the state records the last delivered batch.
        case stopped
    }

    /// Runs over `reader` from `checkpoint` (a new one, or one read from the state file to resume).
    ///
    /// - Parameters:
    ///   - reader: The export, at its start.
    ///   - checkpoint: Where to start: lines up to ``TMDBExportCheckpoint/line`` are read past, and the id of
    ///     its last sent line is checked.
    ///   - statePath: Where the state is written after each delivered batch; `nil` writes none.
    ///   - send: Delivers jobs, returning once the broker confirmed every one.
    ///   - backlog: The fetch group's backlog now (asked only when ``EnqueuePacing/maxBacklog`` is set).
    ///   - shouldStop: Checked between batches: `true` ends the run after the batch in flight.
    ///   - progress: Called about every ``progressInterval``, and at the end.
    ///   - problem: Called with `line N: reason` for each bad line.
    /// - Returns: How the run ended, and the final state.
    /// - Throws: The ``OperationsError`` of a corrupt or cut-off file, a different export than the state's, or
    ///   too many bad lines; or what `send`, `backlog` or the state file threw. The state file keeps what was
    ///   delivered before.
    public func run(
        reader: TMDBExportReader,
        checkpoint start: TMDBExportCheckpoint,
        statePath: String?,
        send: ([FetchJob]) async throws -> Void,
        backlog: () async throws -> Int,
        shouldStop: () -> Bool = { false },
        progress: (TMDBExportProgress) -> Void = { _ in },
        problem: (String) -> Void = { _ in }
    ) async throws -> (ending: Ending, checkpoint: TMDBExportCheckpoint) {
        let clock = ContinuousClock()
        let started = clock.now
        var saved = start
        var current = start
        var batch: [FetchJob] = []
        var lastReport = started
        var startBytes: Int64?
        // The pace: jobs sent since `scheduleStart`, at most `rate` a second.
        var scheduleStart = started
        var scheduledJobs = 0
        // The backlog when last asked, and the jobs sent since: together an upper bound of the backlog now.
        var knownBacklog: (value: Int, at: ContinuousClock.Instant)?
        var sentSinceAsked = 0
        var isWaiting = false
        var jobsThisRun = 0

        func report(force: Bool = false) {
            let now = clock.now
            guard force || now - lastReport >= self.progressInterval else { return }
            lastReport = now
            progress(
                TMDBExportProgress(
                    line: reader.lineNumber,
                    jobs: jobsThisRun,
                    totalJobs: current.jobs,
                    filtered: current.filtered,
                    bad: current.bad,
                    bytesRead: reader.bytesRead,
                    size: reader.size,
                    startBytes: startBytes ?? reader.bytesRead,
                    elapsed: now - started,
                    backlog: self.pacing.maxBacklog > 0 ? knownBacklog.map { $0.value + sentSinceAsked } : nil,
                    isWaitingForBacklog: isWaiting
                )
            )
        }

        /// Delivers the batch and writes the state; `false` when asked to stop while waiting for the backlog
        /// (nothing of the batch was sent).
        func deliver() async throws -> Bool {
            if !batch.isEmpty {
                if self.pacing.maxBacklog > 0 {
                    while true {
                        let now = clock.now
                        if let known = knownBacklog, now - known.at < .seconds(1),
                            known.value + sentSinceAsked + batch.count <= self.pacing.maxBacklog
                        {
                            break
                        }
                        let value = try await backlog()
                        knownBacklog = (value, clock.now)
                        sentSinceAsked = 0
                        // A batch larger than the bound still goes once nothing waits.
                        if value + batch.count <= self.pacing.maxBacklog || value == 0 { break }
                        isWaiting = true
                        report()
                        if shouldStop() { return false }
                        try await clock.sleep(for: self.pacing.backlogPoll)
                    }
                    if isWaiting {
                        // Waiting was the pace; the rate counts again from here, without a burst to catch up.
                        isWaiting = false
                        scheduleStart = clock.now
                        scheduledJobs = 0
                    }
                }
                if self.pacing.rate > 0 {
                    let due = scheduleStart + .seconds(Double(scheduledJobs) / self.pacing.rate)
                    if due > clock.now { try await clock.sleep(until: due) }
                }
                try await send(batch)
                scheduledJobs += batch.count
                sentSinceAsked += batch.count
                jobsThisRun += batch.count
                current.jobs += batch.count
                batch.removeAll(keepingCapacity: true)
            }
            if current != saved {
                if let statePath { try current.write(to: statePath) }
                saved = current
            }
            return true
        }

        /// The next line; on a file that cannot be read further, what was read is sent first.
        func nextLine() async throws -> (number: Int, bytes: [UInt8])? {
            do {
                return try reader.nextLine()
            } catch {
                _ = try await deliver()
                throw error
            }
        }

        var resumeChecked = start.lastSent == nil
        while let (number, bytes) = try await nextLine() {
            if number <= start.line {
                if let lastSent = start.lastSent, number == lastSent.line {
                    guard case .success(let entry) = TMDBExportEntry.parse(bytes), entry.id == lastSent.id else {
                        throw OperationsError(
                            .enqueue,
                            "\(reader.path) is not the export the state file describes: line \(number) does not hold movie \(lastSent.id); remove the state file to start over"
                        )
                    }
                    resumeChecked = true
                }
                continue
            }
            if startBytes == nil { startBytes = reader.bytesRead }
            if bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) {
                switch TMDBExportEntry.parse(bytes) {
                case .failure(let error):
                    current.bad += 1
                    problem("line \(number): \(error.reason)")
                    if current.bad > self.maxBadLines {
                        _ = try await deliver()
                        throw OperationsError(
                            .enqueue,
                            "more than \(self.maxBadLines) bad lines in \(reader.path) (the last at line \(number)): not a TMDB export; the jobs of lines before it were sent"
                        )
                    }
                case .success(let entry) where self.plan.filter.admits(entry):
                    batch.append(contentsOf: self.plan.jobs(for: entry.id))
                    current.lastSent = (number, entry.id)
                case .success:
                    current.filtered += 1
                }
            }
            current.line = number
            if batch.count >= self.pacing.effectiveBatch {
                let delivered = try await deliver()
                report()
                if !delivered || shouldStop() {
                    report(force: true)
                    return (.stopped, saved)
                }
            }
        }
        guard resumeChecked else {
            throw OperationsError(
                .enqueue,
                "\(reader.path) is shorter than the export the state file describes (it stopped at line \(start.line)); remove the state file to start over"
            )
        }
        current.isComplete = true
        guard try await deliver() else {
            report(force: true)
            return (.stopped, saved)
        }
        report(force: true)
        return (.complete, current)
    }
}
