public import MarqueeCore
public import MarqueeKafka

/// One job followed through the stages: its lineage tree from the store's `job_outcomes` (its root, the path down
/// to it, its children) merged with the dead letters of the tree's jobs — what `marquee job` shows (docs/job.md).
///
/// The store holds each job's latest outcome; the dead-letter topics hold where a job was parked
/// (`stage/partition/offset`). A job may be known from either alone: dead-lettered before the indexer stored its
/// outcome, or spawned and not finished yet (its parent's outcome names it). The tree is built from parent links;
/// jobs whose parent is unknown, and parent links that loop, never hang or drop a job: what cannot be reached from
/// the root is shown after it, each piece once.
public struct JobTrace: Sendable {
    /// One job of the tree, with what the store and the dead-letter topics say about it.
    public struct Job: Sendable, Hashable {
        /// The job.
        public var id: JobID
        /// The job that spawned it, when known.
        public var parentID: JobID?
        /// The root of its lineage, when known.
        public var rootID: JobID?
        /// Its latest outcome in the store; `nil` when the store has none.
        public var outcome: JobOutcome?
        /// Its dead letters, oldest first (a replayed letter that failed again leaves another).
        public var deadLetters: [DeadLetter] = []
        /// When it was queued, in milliseconds since the epoch: a root's id time (a ULID's timestamp), a spawned
        /// job's parent's outcome time when the parent is done (its outputs were sent then); `nil` when unknown.
        public var queuedAt: Int64?
        /// Whether this is the job asked about.
        public var isRequested = false

        /// A job with nothing known about it but its id.
        public init(id: JobID, parentID: JobID? = nil, rootID: JobID? = nil) {
            self.id = id
            self.parentID = parentID
            self.rootID = rootID
        }

        /// `done`, `retried` or `dead-lettered` from the store; `dead-lettered` when only a dead letter is known;
        /// ``pending`` when neither (spawned and not finished yet, or its outcome not stored yet).
        public var status: String {
            self.outcome?.outcome.name ?? (self.deadLetters.isEmpty ? Self.pending : "dead-lettered")
        }

        /// The status of a job with no outcome and no dead letter.
        public static let pending = "pending"

        /// The payload's kind (`tmdb.movie`, `image`), from the outcome, else the newest dead letter.
        public var kind: String? { self.outcome?.kind ?? self.deadLetters.last?.kind }

        /// The stage that ran it, from the outcome, else the newest dead letter.
        public var stage: String? { self.outcome?.stage ?? self.deadLetters.last?.id.stage }

        /// How many times it ran: the highest attempt the outcome or a dead letter names.
        public var attempts: Int? {
            let values = [self.outcome?.attempt] + self.deadLetters.map(\.attempt)
            return values.compactMap { $0 }.max()
        }

        /// The error kind of its latest failure: the outcome's, else the newest dead letter's.
        public var errorKind: String? {
            self.outcome.map { $0.outcome.errorKind?.rawValue } ?? self.deadLetters.last?.errorKind
        }

        /// The error of its latest failure: the outcome's, else the newest dead letter's.
        public var error: String? { self.outcome.map { $0.outcome.error } ?? self.deadLetters.last?.error }

        /// The earliest time known of it: queued, its outcome, a dead letter (milliseconds since the epoch).
        public var firstAt: Int64? { self.times.min() }

        /// The latest time known of it: its outcome or a dead letter (milliseconds since the epoch).
        public var lastAt: Int64? {
            ([self.outcome?.finishedAt] + self.deadLetters.map(\.timestamp)).compactMap { $0 }.max()
        }

        private var times: [Int64] {
            ([self.queuedAt, self.outcome?.finishedAt] + self.deadLetters.map(\.timestamp)).compactMap { $0 }
        }
    }

    /// Whether the dead-letter topics were read.
    public enum DeadLetterReading: Sendable, Hashable {
        /// Read: every letter of the tree's jobs is in it.
        case read
        /// Not asked for (`--no-dlq`).
        case skipped
        /// The broker could not be read; `isUnreachable` when no broker answered at all.
        case failed(String, isUnreachable: Bool)
    }

    /// The job asked about.
    public let requestedID: JobID
    /// The root of its lineage: from the store, else from its dead letter; `nil` when neither knows the job.
    public let rootID: JobID?
    /// Every job shown, by id.
    public private(set) var jobs: [JobID: Job] = [:]
    /// Each job's children, in the order its outcome spawned them (then by time).
    public private(set) var children: [JobID: [JobID]] = [:]
    /// The tops of the trees shown: the root first (when known), then each job not reachable from it whose parent
    /// is unknown, or that sits on a parent loop.
    public private(set) var tops: [JobID] = []
    /// How many jobs the store holds under the root.
    public let jobsInStore: Int
    /// How many of them were read (all of them unless the tree is larger than the limit).
    public let jobsRead: Int
    /// Dead letters under the root of jobs not shown (when the tree was read in part).
    public private(set) var deadLettersNotShown = 0
    /// Whether and how the dead-letter topics were read.
    public let deadLetterReading: DeadLetterReading
    /// Why the store could not be read, when it could not.
    public let storeFailure: String?

    /// The deepest level drawn under a top; deeper jobs are counted, not drawn (a chain that deep is damaged data).
    public static let maximumDepth = 64

    /// Builds the tree of a job from its lineage rows and dead letters.
    ///
    /// - Parameters:
    ///   - requestedID: The job asked about.
    ///   - rootID: The root of its lineage, as the store found it (`nil` when the store does not know the job);
    ///     else the root its dead letter names.
    ///   - outcomes: The store's rows of the tree (``jobsRead``).
    ///   - jobsInStore: How many jobs the store holds under the root (more than `outcomes` when it was cut).
    ///   - deadLetters: Dead letters of the tree's jobs; letters of other trees are left out.
    ///   - deadLetterReading: Whether and how the dead-letter topics were read.
    ///   - storeFailure: Why the store could not be read, when it could not.
    public init(
        requestedID: JobID,
        rootID: JobID?,
        outcomes: [JobOutcome],
        jobsInStore: Int,
        deadLetters: [DeadLetter],
        deadLetterReading: DeadLetterReading = .read,
        storeFailure: String? = nil
    ) {
        self.requestedID = requestedID
        let ownLetter = deadLetters.first { $0.jobID == requestedID.rawValue }
        let root =
            rootID ?? ownLetter.flatMap { $0.root.map(JobID.init(rawValue:)) } ?? (ownLetter == nil ? nil : requestedID)
        self.rootID = root
        self.jobsInStore = jobsInStore
        self.deadLetterReading = deadLetterReading
        self.storeFailure = storeFailure

        var jobs: [JobID: Job] = [:]
        for outcome in outcomes {
            // One row per job in the store; should one come twice, the later outcome wins.
            if let known = jobs[outcome.jobID]?.outcome, known.finishedAt > outcome.finishedAt { continue }
            var job = jobs[outcome.jobID] ?? Job(id: outcome.jobID)
            job.parentID = outcome.parentID
            job.rootID = outcome.rootID
            job.outcome = outcome
            jobs[outcome.jobID] = job
        }
        self.jobsRead = jobs.count
        let isWhole = jobs.count >= jobsInStore
        var lettersNotShown = 0
        for letter in deadLetters.sorted(by: DeadLetter.isOlder) {
            guard let text = letter.jobID else { continue }
            let id = JobID(rawValue: text)
            let parent = letter.parent.map(JobID.init(rawValue:))
            let isKnown = jobs[id] != nil || id == requestedID
            guard isKnown || (root != nil && letter.root == root?.rawValue) else { continue }
            // A tree read in part shows the letters of the jobs read; the others are counted (their jobs are among
            // those not shown).
            guard isKnown || isWhole else {
                lettersNotShown += 1
                continue
            }
            var job = jobs[id] ?? Job(id: id, parentID: parent, rootID: letter.root.map(JobID.init(rawValue:)))
            job.deadLetters.append(letter)
            jobs[id] = job
        }
        self.deadLettersNotShown = lettersNotShown
        guard !jobs.isEmpty else { return }

        // Jobs known only by name: spawned ones without an outcome yet (when the whole tree was read, so a missing
        // row means the job has none), and parents whose rows are missing.
        if isWhole {
            for outcome in outcomes {
                for child in outcome.spawned where jobs[child] == nil {
                    jobs[child] = Job(id: child, parentID: outcome.jobID, rootID: outcome.rootID)
                }
            }
        }
        for job in Array(jobs.values) {
            guard let parent = job.parentID, jobs[parent] == nil else { continue }
            jobs[parent] = Job(id: parent, parentID: nil, rootID: job.rootID)
        }
        // Times and the requested mark.
        for id in Array(jobs.keys) {
            guard var job = jobs[id] else { continue }
            if job.parentID == nil, job.rootID == nil || job.rootID == id {
                job.queuedAt = id.milliseconds.map { Int64($0) }
            } else if let parent = job.parentID.flatMap({ jobs[$0]?.outcome }), parent.outcome == .done {
                job.queuedAt = parent.finishedAt
            }
            job.isRequested = id == requestedID
            jobs[id] = job
        }
        self.jobs = jobs

        // Children in their parent's spawned order, then by time, then by id.
        var children: [JobID: [JobID]] = [:]
        for job in jobs.values {
            guard let parent = job.parentID, parent != job.id, jobs[parent] != nil else { continue }
            children[parent, default: []].append(job.id)
        }
        for (parent, ids) in children {
            let order = Dictionary(
                (jobs[parent]?.outcome?.spawned ?? []).enumerated().map { ($0.element, $0.offset) },
                uniquingKeysWith: { first, _ in first }
            )
            children[parent] = ids.sorted { lhs, rhs in
                let left = (order[lhs] ?? Int.max, jobs[lhs]?.firstAt ?? Int64.max, lhs.rawValue)
                let right = (order[rhs] ?? Int.max, jobs[rhs]?.firstAt ?? Int64.max, rhs.rawValue)
                return left < right
            }
        }
        self.children = children

        // The root's tree, then each piece not reachable from it, from its top (a job whose parent is unknown, or
        // the first job met on a parent loop).
        var reached: Set<JobID> = []
        func reach(_ top: JobID) {
            var stack = [top]
            while let id = stack.popLast() {
                guard reached.insert(id).inserted else { continue }
                stack += children[id] ?? []
            }
        }
        var tops: [JobID] = []
        if let root, jobs[root] != nil {
            tops.append(root)
            reach(root)
        }
        let rest = jobs.values.sorted {
            ($0.firstAt ?? Int64.max, $0.id.rawValue) < ($1.firstAt ?? Int64.max, $1.id.rawValue)
        }
        for job in rest where !reached.contains(job.id) {
            var top = job.id
            var climbed: Set<JobID> = [top]
            while let parent = jobs[top]?.parentID, jobs[parent] != nil, !reached.contains(parent),
                climbed.insert(parent).inserted
            {
                top = parent
            }
            tops.append(top)
            reach(top)
        }
        self.tops = tops
    }

    /// Whether anything is known of the job: a row in the store or a dead letter.
    public var isFound: Bool { !self.jobs.isEmpty }

    /// Jobs of the tree in the store that were not read (the tree is larger than the limit).
    public var jobsNotRead: Int { max(0, self.jobsInStore - self.jobsRead) }

    /// The job asked about, when found.
    public var requested: Job? { self.jobs[self.requestedID] }

    /// How many jobs shown have each status (`done`, `retried`, `dead-lettered`, `pending`).
    public var statusCounts: [String: Int] {
        self.jobs.values.reduce(into: [:]) { $0[$1.status, default: 0] += 1 }
    }

    /// The exit status of `marquee job`: 0 everything was read; 1 the job was shown but the store or the
    /// dead-letter topics could not be read (or nothing was shown because the store could not be read); 65 neither
    /// the store nor the dead-letter topics know the job; 69 nothing could be shown and no broker answered.
    public var exitStatus: Int32 {
        var deadLettersFailed = false
        var isUnreachable = false
        if case .failed(_, let unreachable) = self.deadLetterReading {
            deadLettersFailed = true
            isUnreachable = unreachable
        }
        // The statuses of docs/operating.md's table (MarqueeWorker.ExitStatus): 0 success, 1 failure, 65 data
        // error, 69 unavailable.
        if self.isFound { return self.storeFailure != nil || deadLettersFailed ? 1 : 0 }
        if isUnreachable { return 69 }
        if self.storeFailure != nil || deadLettersFailed { return 1 }
        return 65
    }
}

// MARK: - Gathering

extension JobTrace {
    /// What the store found of a lineage (``JobTrace/gather(_:lineage:deadLetters:)``).
    public struct Lineage: Sendable {
        /// The root of the tree; `nil` when the store does not know the job.
        public var rootID: JobID?
        /// The rows read.
        public var outcomes: [JobOutcome]
        /// How many jobs the store holds under the root.
        public var total: Int

        /// - Parameters:
        ///   - rootID: The root of the tree; `nil` when the store does not know the job.
        ///   - outcomes: The rows read.
        ///   - total: How many jobs the store holds under the root.
        public init(rootID: JobID?, outcomes: [JobOutcome], total: Int) {
            self.rootID = rootID
            self.outcomes = outcomes
            self.total = total
        }
    }

    /// Reads a job's lineage and its tree's dead letters, and builds the tree.
    ///
    /// The store is asked first; the dead letters are then read for the tree's jobs (and every letter under its
    /// root). A job the store does not know whose dead letter names a root is looked up again by that root, so a
    /// job dead-lettered before its outcome was stored still shows in its tree. Failures of either source are
    /// kept in the result, never thrown: what the other source found is still shown.
    ///
    /// - Parameters:
    ///   - id: The job asked about.
    ///   - lineage: Reads the store's lineage of a job (``JobTrace/Lineage``).
    ///   - deadLetters: Reads the dead letters of the given job ids and roots; `nil` to skip the dead-letter topics.
    public static func gather(
        _ id: JobID,
        lineage: (JobID) async throws -> Lineage,
        deadLetters: ((_ jobs: Set<String>, _ roots: Set<String>) async throws -> [DeadLetter])?
    ) async -> JobTrace {
        var storeFailure: String?
        var found = Lineage(rootID: nil, outcomes: [], total: 0)
        do {
            found = try await lineage(id)
        } catch {
            storeFailure = Self.describe(error)
        }
        guard let deadLetters else {
            return JobTrace(
                requestedID: id,
                rootID: found.rootID,
                outcomes: found.outcomes,
                jobsInStore: found.total,
                deadLetters: [],
                deadLetterReading: .skipped,
                storeFailure: storeFailure
            )
        }
        func ids(_ lineage: Lineage) -> Set<String> {
            Set(lineage.outcomes.flatMap { [$0.jobID.rawValue] + $0.spawned.map(\.rawValue) } + [id.rawValue])
        }
        var letters: [DeadLetter] = []
        var reading = DeadLetterReading.read
        do {
            letters = try await deadLetters(ids(found), Set([found.rootID ?? id].map(\.rawValue)))
            // Known only from its dead letter: its tree is the one its letter's root names.
            if found.rootID == nil, storeFailure == nil,
                let root = letters.first(where: { $0.jobID == id.rawValue })?.root.map(JobID.init(rawValue:)),
                root != id
            {
                let byRoot = try await lineage(root)
                if byRoot.rootID != nil {
                    found = byRoot
                    letters += try await deadLetters(ids(byRoot), [root.rawValue])
                }
            }
        } catch {
            reading = .failed(Self.describe(error), isUnreachable: (error as? KafkaError)?.code == .brokerUnreachable)
        }
        var unique: [DeadLetterID: DeadLetter] = [:]
        for letter in letters { unique[letter.id] = letter }
        return JobTrace(
            requestedID: id,
            rootID: found.rootID,
            outcomes: found.outcomes,
            jobsInStore: found.total,
            deadLetters: Array(unique.values),
            deadLetterReading: reading,
            storeFailure: storeFailure
        )
    }

    private static func describe(_ error: any Error) -> String {
        (error as? KafkaError)?.reason ?? "\(error)"
    }
}

extension DeadLetterQueue {
    /// Every letter the dead-letter topics hold, purged or not, of the given jobs or under the given roots (by
    /// their `marquee-id` and `marquee-root` headers).
    ///
    /// Reads every dead-letter partition to its end, keeping only the matching letters.
    ///
    /// - Throws: A ``KafkaError`` when the broker does not answer.
    public func letters(ofJobs jobs: Set<String>, roots: Set<String>) async throws(KafkaError) -> [DeadLetter] {
        let partitions = try await self.partitions()
        var found: [DeadLetter] = []
        try await self.scan(partitions, includingPurged: true) { letter in
            if let id = letter.jobID, jobs.contains(id) {
                found.append(letter)
            } else if let root = letter.root, roots.contains(root) {
                found.append(letter)
            }
        }
        return found
    }
}
