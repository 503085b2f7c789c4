public import Logging
public import MarqueeCore
import Synchronization

/// One job as a stage's handler sees it.
public struct StageJob: Sendable {
    public var envelope: Envelope
    public var key: [UInt8]?
    public var payload: [UInt8]
    /// Where it was read, `topic/partition/offset`.
    public var source: String
    let context: JobContext
    /// The stage's logger, which ``logger`` adds the job's metadata to.
    let stageLogger: Logger

    /// The stage's logger with the job's metadata: its id, attempt, kind, source and, when its envelope carries a
    /// `traceparent`, its trace id (`trace_id`). The stage logs about the job through the same metadata, so a
    /// handler that logs through this one puts every line of the job under its id and trace.
    public var logger: Logger {
        self.stageLogger.job(self.envelope, source: self.source, kind: self.context.kind)
    }

    /// Says what the job is waiting for now (`"fetching"`, `"reading validators"`): a job that does not end in
    /// time at shutdown is logged with its phase and how long it has been in it, so a wait that ignores
    /// cancellation is found from the log. The stage sets its own phases around the handler (`handling`,
    /// `delivering outputs`, `after delivery`, `routing the failure`).
    public func enter(_ phase: StaticString) {
        self.context.enter(phase)
    }

    /// Runs `action` once every output the handler returns for this job (and the job's outcome record) was
    /// acknowledged by the broker, before the job's offset is committed; never if the job fails or its outputs
    /// cannot be delivered.
    ///
    /// For what must not become visible before the outputs are durable. The fetch stage stores HTTP validators
    /// here: stored earlier, a crash before the delivery would make the redelivered job's conditional request
    /// answer 304, which produces nothing, and the outputs would be lost.
    public func whenDelivered(_ action: @escaping @Sendable () async -> Void) {
        self.context.afterDelivery.withLock { $0.append(action) }
    }
}

/// A message a handler asks the stage to produce when the job succeeds.
public struct StageOutput: Sendable {
    /// The target stage (`fetch`, `images`, `records`): its main topic receives the output.
    public var stage: String
    /// The dedupe key of what the output is about.
    public var key: String
    public var payload: [UInt8]
    /// The refresh reason the output's envelope carries instead of the job's (``Envelope/refresh``); `nil`: the
    /// job's, inherited.
    public var refresh: RefreshReason?

    public init(stage: String, key: String, payload: [UInt8], refresh: RefreshReason? = nil) {
        self.stage = stage
        self.key = key
        self.payload = payload
        self.refresh = refresh
    }
}

/// How a job failed, and what the stage should do with it.
public struct StageError: Error, CustomStringConvertible, Sendable {
    public var kind: Envelope.ErrorKind
    /// What happened (never a secret: it goes into DLQ headers and logs).
    public var reason: String
    /// A transient failure's earliest retry (an upstream's `Retry-After`, a quota reset).
    public var minimumWait: Duration?
    /// Set when the failure is a dependency that is down for every job (the store, an upstream refusing the
    /// key): the stage then pauses instead of routing the job, and tries again until the dependency is back.
    public var dependency: String?
    /// Set when the job cannot run now for a reason that is not its own (its source is paused for the pipeline,
    /// a daily budget is spent): the job waits this long in a retry tier without spending an attempt, and can
    /// never reach the dead-letter topic this way.
    public var hold: Duration?
    /// With ``dependency``: the dependency refused this worker's credentials (a login, a key). The stage pauses as
    /// for an outage; `/readyz` and the metrics say the credentials are at fault, for an alert.
    public var credentialsRefused: Bool

    public init(
        _ kind: Envelope.ErrorKind,
        _ reason: String,
        minimumWait: Duration? = nil,
        dependency: String? = nil,
        hold: Duration? = nil,
        credentialsRefused: Bool = false
    ) {
        self.kind = kind
        self.reason = reason
        self.minimumWait = minimumWait
        self.dependency = dependency
        self.hold = hold
        self.credentialsRefused = credentialsRefused
    }

    /// The job cannot run now, for a reason that is not its own: it waits `wait` in a retry tier, its attempt
    /// unchanged, and runs again; while other jobs of the stage go on.
    public static func held(_ reason: String, wait: Duration) -> StageError {
        StageError(.transient, reason, hold: wait)
    }

    /// A dependency every job needs is down: pause the stage (not-ready) and retry this job when it is back.
    /// Nothing goes to the retry tiers or the DLQ meanwhile. `credentialsRefused`: it is up but refuses this
    /// worker's credentials, which pauses the same way (the reason should name the setting to fix).
    public static func dependencyDown(
        _ dependency: String,
        _ reason: String,
        retryAfter: Duration? = nil,
        credentialsRefused: Bool = false
    ) -> StageError {
        StageError(
            .transient,
            reason,
            minimumWait: retryAfter,
            dependency: dependency,
            credentialsRefused: credentialsRefused
        )
    }

    public static func transient(_ reason: String, minimumWait: Duration? = nil) -> StageError {
        StageError(.transient, reason, minimumWait: minimumWait)
    }

    public static func permanent(_ reason: String) -> StageError { StageError(.permanent, reason) }

    /// A payload that cannot be read at all.
    public static func poison(_ error: PayloadError) -> StageError { StageError(.poison, error.description) }

    public var description: String { "\(self.kind): \(self.reason)" }
}

/// What a stage runs for each job.
public protocol StageHandler: Sendable {
    /// Handles one job.
    ///
    /// - Returns: The messages to produce; the job's offset is committed only after all are acknowledged.
    /// - Throws: A ``StageError`` saying whether to retry (transient), give up (permanent) or quarantine the
    ///   bytes (poison). A module's error (`RetriableError`) is transient when it says a retry can help and
    ///   permanent otherwise; any other error counts as transient.
    func handle(_ job: StageJob) async throws -> [StageOutput]
}

/// What became of one job.
public enum StageOutcome: Hashable, Sendable {
    /// Handled; its outputs were produced.
    case succeeded(outputs: Int)
    /// Failed transiently; moved to this retry tier.
    case retried(tier: Int)
    /// Could not run now for a reason not its own (a paused source, a spent budget); waits in this retry tier
    /// with its attempt unchanged.
    case held(tier: Int)
    /// Parked in the dead-letter topic, for this kind of error.
    case deadLettered(Envelope.ErrorKind)
}

/// One finished job, as ``StageConfiguration/onJobFinished`` reports it.
public struct StageJobReport: Hashable, Sendable {
    /// The payload's `kind` (``PayloadKind/peek(_:)``: a known kind or `unknown`).
    public var kind: String
    public var outcome: StageOutcome
    /// From the handler's start to the durable outcome; zero for poison messages, which never reach a handler.
    public var duration: Duration
    /// The job's id; `nil` for a message whose headers are not an envelope. A job delivered again (at least once:
    /// after a crash, or after a job before it in its partition was handed back) is reported again, same id.
    public var jobID: JobID?

    public init(kind: String, outcome: StageOutcome, duration: Duration, jobID: JobID? = nil) {
        self.kind = kind
        self.outcome = outcome
        self.duration = duration
        self.jobID = jobID
    }
}

/// A stage's state at one moment (``Stage/status``).
public struct StageStatus: Hashable, Sendable {
    /// The stage's consumer exists (between the start of ``Stage/run()`` and its end).
    public var isRunning: Bool
    public var assignedPartitions: Int
    /// Assigned partitions paused now: retry tiers waiting for a job's time, or all while a dependency is down.
    public var pausedPartitions: Int
    public var inFlight: Int
    /// Jobs taken whose offsets cannot be committed yet: running, or finished behind one still running (only a
    /// partition's first unfinished offset can be committed). A revocation or a crash has them run again.
    public var uncommitted: Int
    /// The dependency every job needs that is down now, if any, and the error it gave.
    public var downDependency: String?
    public var downReason: String?
    /// Since when (epoch ms) the dependency has been down: its first failure after the last success.
    public var downSince: Int64?
    /// Whether the dependency that is down refused this worker's credentials.
    public var credentialsRefused: Bool
    /// The consumer's latest librdkafka statistics JSON (when statistics are turned on).
    public var consumerStatistics: String?

    public init(
        isRunning: Bool,
        assignedPartitions: Int,
        pausedPartitions: Int,
        inFlight: Int,
        uncommitted: Int = 0,
        downDependency: String? = nil,
        downReason: String? = nil,
        downSince: Int64? = nil,
        credentialsRefused: Bool = false,
        consumerStatistics: String? = nil
    ) {
        self.isRunning = isRunning
        self.assignedPartitions = assignedPartitions
        self.pausedPartitions = pausedPartitions
        self.inFlight = inFlight
        self.uncommitted = uncommitted
        self.downDependency = downDependency
        self.downReason = downReason
        self.downSince = downSince
        self.credentialsRefused = credentialsRefused
        self.consumerStatistics = consumerStatistics
    }

    /// Why the stage cannot do its work now, or `nil` when it can: it runs, has partitions assigned and no
    /// dependency is down (what `/readyz` answers).
    public var notReadyReason: String? {
        if let dependency = self.downDependency {
            let state = self.credentialsRefused ? "refuses this worker's credentials" : "is down"
            let since = self.downSince.map { " since \(UTCInstant(milliseconds: $0).iso8601)" } ?? ""
            return "\(dependency) \(state)\(since): \(self.downReason ?? "")"
        }
        if !self.isRunning { return "the stage is not running" }
        if self.assignedPartitions == 0 {
            return "no partitions assigned (joining the consumer group, or more members than partitions)"
        }
        return nil
    }
}
