public import MarqueeCore

/// One job as a stage's handler sees it.
public struct StageJob: Sendable {
    public var envelope: Envelope
    public var key: [UInt8]?
    public var payload: [UInt8]
    /// Where it was read, `topic/partition/offset`.
    public var source: String
}

/// A message a handler asks the stage to produce when the job succeeds.
public struct StageOutput: Sendable {
    /// The target stage (`fetch`, `images`, `records`): its main topic receives the output.
    public var stage: String
    /// The dedupe key of what the output is about.
    public var key: String
    public var payload: [UInt8]

    public init(stage: String, key: String, payload: [UInt8]) {
        self.stage = stage
        self.key = key
        self.payload = payload
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

    public init(_ kind: Envelope.ErrorKind, _ reason: String, minimumWait: Duration? = nil, dependency: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.minimumWait = minimumWait
        self.dependency = dependency
    }

    /// A dependency every job needs is down: pause the stage (not-ready) and retry this job when it is back.
    /// Nothing goes to the retry tiers or the DLQ meanwhile.
    public static func dependencyDown(_ dependency: String, _ reason: String, retryAfter: Duration? = nil) -> StageError {
        StageError(.transient, reason, minimumWait: retryAfter, dependency: dependency)
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
    ///   bytes (poison). Any other error counts as transient.
    func handle(_ job: StageJob) async throws -> [StageOutput]
}

/// What became of one job.
public enum StageOutcome: Hashable, Sendable {
    /// Handled; its outputs were produced.
    case succeeded(outputs: Int)
    /// Failed transiently; moved to this retry tier.
    case retried(tier: Int)
    /// Parked in the dead-letter topic, for this kind of error.
    case deadLettered(Envelope.ErrorKind)
}
