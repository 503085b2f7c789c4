import Logging
import MarqueeHTTP
import MarqueeKafka
import MarqueeOperations

import struct Foundation.Date

/// One point of a stage's chart: the stage's totals at one sample.
struct LagPoint: Sendable, Hashable {
    /// Epoch ms.
    var time: Int64
    var lag: Int64
    var dueLag: Int64
    /// Age of the oldest due message, in seconds (`nil`: nothing due, or no timestamp).
    var lagSeconds: Double?
    var rate: Double?
}

/// A worker as the dashboard saw it over its samples.
struct WorkerRecord: Sendable, Hashable {
    /// Where it was found (its group membership, `MARQUEE_WORKERS`) at the last sample.
    var target: WorkerTarget
    /// Its last answer; `nil` when there is no address to ask (a member that announces none).
    var status: WorkerStatus?
    /// Times the worker's job counters fell between two samples: its process started again.
    var restarts: Int
    /// When this dashboard first asked it (epoch ms).
    var firstSeen: Int64
    /// When it last answered (epoch ms).
    var lastAnswered: Int64?
    /// Its jobs finished (succeeded + retried + dead-lettered) at the last sample that had figures.
    var lastJobs: Double?

    /// The record of a worker first seen at `now`.
    init(target: WorkerTarget, status: WorkerStatus?, now: Int64) {
        self.target = target
        self.status = status
        self.restarts = 0
        self.firstSeen = now
        self.lastAnswered = nil
        self.lastJobs = nil
        self.observe(status, at: now)
    }

    /// Takes a new answer into account.
    ///
    /// A worker's job counters only grow within one process, so counters lower than at the last sample mean a
    /// new process answers at the address: one restart. (A restart between two samples after which the new
    /// process already finished more jobs than the old one had is not seen.)
    mutating func observe(_ status: WorkerStatus?, at now: Int64) {
        self.status = status
        guard let status else { return }
        if status.state != .unreachable { self.lastAnswered = now }
        guard let figures = status.figures else { return }
        let jobs = (figures.succeeded ?? 0) + (figures.retried ?? 0) + (figures.deadLettered ?? 0)
        if let last = self.lastJobs, jobs < last { self.restarts += 1 }
        self.lastJobs = jobs
    }
}

/// The dead-letter topics at one sample: counts and the latest letters.
struct DeadLetterSummary: Sendable {
    struct Count: Sendable, Hashable, Comparable {
        var stage: String
        var kind: String
        var errorKind: String

        static func < (lhs: Count, rhs: Count) -> Bool {
            (lhs.stage, lhs.kind, lhs.errorKind) < (rhs.stage, rhs.kind, rhs.errorKind)
        }
    }

    /// Letters not purged, per stage, kind and error kind.
    var counts: [Count: Int] = [:]
    /// Letters not purged, per stage (every stage of the layout, 0 included).
    var byStage: [String: Int] = [:]
    var total = 0
    /// Letters purged (still held by the topics, hidden).
    var purged: Int64 = 0
    /// The latest letters, oldest first.
    var latest: [DeadLetter] = []
}

/// What the dashboard sampled: read by every page and endpoint.
struct MonitorSnapshot: Sendable {
    /// Completed sampling rounds.
    var rounds = 0
    /// Epoch ms of the last completed round.
    var lastRound: Int64?
    var report: LagReport?
    /// Why the last lag sample failed (the broker unreachable…), if it did.
    var lagError: String?
    /// Per stage, oldest first.
    var history: [String: [LagPoint]] = [:]
    /// Per stage in the layout's order: the addresses of `MARQUEE_WORKERS`, then the other group members
    /// (``WorkerTarget/targets(stages:groups:)``).
    var workers: [WorkerRecord] = []
    /// Why the stages' consumer groups could not be described (the members of the last description are shown).
    var workersError: String?
    var deadLetters: DeadLetterSummary?
    var deadLetterError: String?
}

/// Samples lag, workers and dead letters, and keeps a bounded history for the charts.
///
/// An actor for in-memory coordination only: the broker and HTTP calls it awaits run off the cooperative pool
/// (``KafkaAdmin``, ``KafkaReader``, ``HTTPFetcher``). A round that starts while another runs is skipped.
actor DashboardMonitor {
    private let configuration: DashboardConfiguration
    private var sampler: LagSampler
    private var window: LagWindow
    let deadLetterQueue: DeadLetterQueue
    private let fetcher: HTTPFetcher
    private let admin: KafkaAdmin
    private let logger: Logger
    private var state = MonitorSnapshot()
    private var workerRecords: [String: WorkerRecord] = [:]
    /// The stages' groups as last described: kept while the broker cannot be asked.
    private var groups: [String: KafkaConsumerGroupDescription] = [:]
    private var deadLetterTallies: [KafkaTopicPartition: PartitionTally] = [:]
    private var isSampling = false

    init(
        configuration: DashboardConfiguration,
        admin: KafkaAdmin,
        reader: KafkaReader,
        fetcher: HTTPFetcher,
        logger: Logger
    ) {
        self.configuration = configuration
        var sampler = LagSampler(
            admin: admin,
            reader: reader,
            targets: configuration.layout.stages.map { LagTarget(stage: $0) },
            scanLimit: configuration.scanLimit,
            readTimeout: configuration.requestTimeout
        )
        sampler.scanLimit = configuration.scanLimit
        self.sampler = sampler
        self.window = LagWindow(capacity: max(1, configuration.statusSamples))
        var queue = DeadLetterQueue(
            layout: configuration.layout,
            admin: admin,
            reader: reader,
            readerGroup: configuration.deadLetterReaderGroup
        )
        queue.readTimeout = configuration.requestTimeout
        self.deadLetterQueue = queue
        self.fetcher = fetcher
        self.admin = admin
        self.logger = logger
    }

    /// What was sampled so far.
    func snapshot() -> MonitorSnapshot { self.state }

    /// One round: lag of every stage, every worker's `/readyz` and `/metrics` (the members of the stages' groups and
    /// `MARQUEE_WORKERS`), the dead-letter topics.
    ///
    /// Never throws: what could not be read is kept as an error text beside the last good values.
    func round() async {
        guard !self.isSampling else { return }
        self.isSampling = true
        defer { self.isSampling = false }

        async let workers = self.probeWorkers()
        async let letters = self.readDeadLetters()

        var sampler = self.sampler
        do {
            let observations = try await sampler.sample()
            self.sampler = sampler
            self.window.append(observations)
            let report = LagReport(stages: self.window.evaluate())
            self.state.report = report
            self.state.lagError = nil
            for stage in report.stages {
                var points = self.state.history[stage.stage] ?? []
                points.append(
                    LagPoint(
                        time: stage.time,
                        lag: stage.totals.lag,
                        dueLag: stage.totals.dueLag,
                        lagSeconds: stage.totals.lagAge.map(Self.seconds),
                        rate: stage.totals.rate
                    )
                )
                if points.count > self.configuration.historyCapacity {
                    points.removeFirst(points.count - self.configuration.historyCapacity)
                }
                self.state.history[stage.stage] = points
            }
        } catch {
            self.sampler = sampler
            self.state.lagError = error.reason
            self.logger.warning("lag sample failed", metadata: ["marquee.error": "\(error.reason)"])
        }

        let probed = await workers
        let now = Self.nowMilliseconds()
        var records: [WorkerRecord] = []
        var kept: [String: WorkerRecord] = [:]
        for (target, status) in probed {
            var record: WorkerRecord
            if let known = self.workerRecords[target.key] {
                record = known
                record.target = target
                record.observe(status, at: now)
            } else {
                record = WorkerRecord(target: target, status: status, now: now)
            }
            kept[target.key] = record
            records.append(record)
        }
        // Only the workers of this round: pods that left the group (scaled down) are forgotten.
        self.workerRecords = kept
        self.state.workers = records

        switch await letters {
        case .success(let summary):
            self.state.deadLetters = summary
            self.state.deadLetterError = nil
        case .failure(let error):
            self.state.deadLetterError = error.reason
        }
        self.state.rounds += 1
        self.state.lastRound = now
    }

    /// Every worker's `/readyz` and `/metrics`: the members of the stages' groups at the addresses their client
    /// ids announce, and the addresses of `MARQUEE_WORKERS`. A member without an address is listed unasked.
    private func probeWorkers() async -> [(WorkerTarget, WorkerStatus?)] {
        let layout = self.configuration.layout
        do {
            self.groups = try await self.admin.describeGroups(layout.stages.map(\.group))
            self.state.workersError = nil
        } catch {
            self.state.workersError = error.reason
            self.logger.warning("describing the stages' groups failed", metadata: ["marquee.error": "\(error.reason)"])
        }
        let targets = WorkerTarget.targets(stages: layout.stages, groups: self.groups)
        let fetcher = self.fetcher
        return await withTaskGroup(of: (Int, WorkerStatus?).self) { group in
            for (index, target) in targets.enumerated() {
                group.addTask {
                    guard let address = target.address else { return (index, nil) }
                    return (index, await WorkerStatus.probe(stage: target.stage, address: address, using: fetcher))
                }
            }
            var statuses: [(Int, WorkerStatus?)] = []
            for await status in group { statuses.append(status) }
            return statuses.sorted { $0.0 < $1.0 }.map { (targets[$0.0], $0.1) }
        }
    }

    /// What was read of one dead-letter partition: its letters past the purge position, tallied.
    struct PartitionTally: Sendable {
        /// The partition's start and purge position when it was read: when either moves, it is read again.
        var start: Int64
        var purgedUpTo: Int64
        /// The next offset to read.
        var next: Int64
        var counts: [DeadLetterSummary.Count: Int] = [:]
        var total = 0
        /// The latest letters, at most twice the page's number (trimmed in halves).
        var latest: [DeadLetter] = []
    }

    /// Reads the letters that arrived since the last round (a letter never changes, so each is read once), and
    /// reads a partition again from its purge position when `marquee dlq purge` moved it or retention its start.
    private func readDeadLetters() async -> Result<DeadLetterSummary, KafkaError> {
        let keep = max(0, self.configuration.latestDeadLetters)
        do {
            let partitions = try await self.deadLetterQueue.partitions()
            var tallies: [KafkaTopicPartition: PartitionTally] = [:]
            var reads: [DeadLetterQueue.Partition] = []
            for partition in partitions {
                var tally = self.deadLetterTallies[partition.partition]
                if tally == nil || tally?.start != partition.start || tally?.purgedUpTo != partition.purgedUpTo {
                    tally = PartitionTally(
                        start: partition.start,
                        purgedUpTo: partition.purgedUpTo,
                        next: partition.purgedUpTo
                    )
                }
                tallies[partition.partition] = tally
                // Read from where the last round stopped: the queue reads from a partition's purge position.
                var read = partition
                read.committed = tally?.next
                reads.append(read)
            }
            try await self.deadLetterQueue.scan(reads, includingPurged: false) { letter in
                guard var tally = tallies[letter.record.partition] else { return }
                let key = DeadLetterSummary.Count(
                    stage: letter.id.stage,
                    kind: letter.kind,
                    errorKind: letter.errorKind
                )
                tally.counts[key, default: 0] += 1
                tally.total += 1
                tally.next = letter.offset + 1
                if keep > 0 {
                    tally.latest.append(letter)
                    if tally.latest.count >= 2 * keep {
                        tally.latest = Array(tally.latest.sorted(by: DeadLetter.isOlder).suffix(keep))
                    }
                }
                tallies[letter.record.partition] = tally
            }
            self.deadLetterTallies = tallies

            var summary = DeadLetterSummary()
            for stage in self.configuration.layout.stages { summary.byStage[stage.name] = 0 }
            var latest: [DeadLetter] = []
            for partition in partitions {
                guard let tally = tallies[partition.partition] else { continue }
                summary.counts.merge(tally.counts, uniquingKeysWith: +)
                summary.byStage[partition.stage, default: 0] += tally.total
                summary.total += tally.total
                summary.purged += partition.purgedUpTo - partition.start
                latest += tally.latest
            }
            summary.latest = Array(latest.sorted(by: DeadLetter.isOlder).suffix(keep))
            return .success(summary)
        } catch {
            return .failure(error)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
