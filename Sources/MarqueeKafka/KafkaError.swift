internal import Crdkafka

/// An error raised by the Kafka layer.
///
/// Every failure of ``KafkaProducer``, ``KafkaConsumer`` and ``KafkaAdmin`` is a `KafkaError`. The ``code``
/// says what kind of failure it is; ``reason`` says what happened in words an operator can act on, and never
/// contains credentials (librdkafka's property values are never quoted in it).
public struct KafkaError: Error, CustomStringConvertible, Sendable {
    /// The kind of a ``KafkaError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case configuration
            case brokerUnreachable
            case timedOut
            case delivery
            case queueFull
            case consumer
            case commit
            case admin
            case closed
            case cancelled
            case unsupportedLibraryVersion
        }

        fileprivate let value: Value

        /// A property was rejected by librdkafka or the typed configuration.
        public static let configuration = Code(value: .configuration)
        /// No broker could be reached (refused, unresolvable, or silent) within the configured time.
        public static let brokerUnreachable = Code(value: .brokerUnreachable)
        /// A request did not complete within its timeout.
        public static let timedOut = Code(value: .timedOut)
        /// The broker did not acknowledge a produced message.
        public static let delivery = Code(value: .delivery)
        /// The producer's local queue is full.
        public static let queueFull = Code(value: .queueFull)
        /// The consumer failed (subscription, assignment, fetch).
        public static let consumer = Code(value: .consumer)
        /// An offset commit failed.
        public static let commit = Code(value: .commit)
        /// An admin request (create topics, offsets, groups) failed.
        public static let admin = Code(value: .admin)
        /// The client was used after it was closed.
        public static let closed = Code(value: .closed)
        /// The calling task was cancelled.
        public static let cancelled = Code(value: .cancelled)
        /// The librdkafka linked into this binary is too old.
        public static let unsupportedLibraryVersion = Code(value: .unsupportedLibraryVersion)

        public var description: String {
            switch self.value {
            case .configuration: "configuration"
            case .brokerUnreachable: "brokerUnreachable"
            case .timedOut: "timedOut"
            case .delivery: "delivery"
            case .queueFull: "queueFull"
            case .consumer: "consumer"
            case .commit: "commit"
            case .admin: "admin"
            case .closed: "closed"
            case .cancelled: "cancelled"
            case .unsupportedLibraryVersion: "unsupportedLibraryVersion"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, for an operator.
    public var reason: String
    /// librdkafka's error code, when the failure came from librdkafka.
    public var rdKafkaCode: RDKafkaCode?
    /// The error this one wraps, if any.
    public var underlying: (any Error)?
    /// Where the error was raised.
    public var file: String
    /// Where the error was raised.
    public var line: Int

    /// Whether trying the same operation again later may succeed (a broker that is down, a timeout, a full queue).
    public var isRetriable: Bool {
        if let rdKafkaCode, rdKafkaCode.isRetriable { return true }
        switch self.code.value {
        case .brokerUnreachable, .timedOut, .queueFull: return true
        default: return false
        }
    }

    /// Whether the client is unusable and must be recreated (librdkafka raised a fatal error, for example a
    /// fenced idempotent producer).
    public var isFatal: Bool { self.rdKafkaCode == .fatal }

    /// Whether the producer that raised this cannot send any more, and only a new producer sends again: a fatal
    /// error, or an idempotent producer the broker fenced (it may after an outage made in-flight messages time
    /// out).
    public var leavesProducerUnusable: Bool {
        self.isFatal || self.rdKafkaCode == .producerFenced || self.rdKafkaCode == .invalidProducerEpoch
    }

    public init(
        code: Code,
        reason: String,
        rdKafkaCode: RDKafkaCode? = nil,
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.rdKafkaCode = rdKafkaCode
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    public var description: String {
        var text = "KafkaError.\(self.code): \(self.reason)"
        if let rdKafkaCode { text += " [\(rdKafkaCode.name)]" }
        return text
    }
}

extension KafkaError {
    static func configuration(_ reason: String, file: String = #fileID, line: Int = #line) -> KafkaError {
        KafkaError(code: .configuration, reason: reason, file: file, line: line)
    }

    static func closed(_ what: String, file: String = #fileID, line: Int = #line) -> KafkaError {
        KafkaError(code: .closed, reason: "\(what) is closed", file: file, line: line)
    }

    static func rdKafka(
        _ code: Code,
        _ rdCode: RDKafkaCode,
        context: String,
        file: String = #fileID,
        line: Int = #line
    ) -> KafkaError {
        KafkaError(
            code: code,
            reason: "\(context): \(rdCode.message)",
            rdKafkaCode: rdCode,
            file: file,
            line: line
        )
    }

    /// `brokerUnreachable`: a blocking request got no answer within `timeout` (`code`, if any, says how:
    /// ``RDKafkaCode/meansNoBrokerAnswered``).
    static func unanswered(
        within timeout: Duration,
        _ context: RDKafkaClientContext,
        code: RDKafkaCode? = nil,
        file: String = #fileID,
        line: Int = #line
    ) -> KafkaError {
        KafkaError(
            code: .brokerUnreachable,
            reason: "no broker answered within \(timeout)\(context.lastErrorSuffix)",
            rdKafkaCode: code,
            file: file,
            line: line
        )
    }
}

/// A librdkafka error code (`rd_kafka_resp_err_t`) with named constants for the codes Marquee handles.
public struct RDKafkaCode: Hashable, Sendable, CustomStringConvertible {
    /// The raw `rd_kafka_resp_err_t` value.
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(_ err: rd_kafka_resp_err_t) { self.rawValue = err.rawValue }

    public static let noError = RDKafkaCode(RD_KAFKA_RESP_ERR_NO_ERROR)
    public static let fatal = RDKafkaCode(RD_KAFKA_RESP_ERR__FATAL)
    public static let queueFull = RDKafkaCode(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    public static let timedOut = RDKafkaCode(RD_KAFKA_RESP_ERR__TIMED_OUT)
    public static let messageTimedOut = RDKafkaCode(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
    /// A message over the producer's `message.max.bytes` (refused locally) or the topic's `max.message.bytes`
    /// (refused by the broker).
    public static let messageSizeTooLarge = RDKafkaCode(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
    public static let transport = RDKafkaCode(RD_KAFKA_RESP_ERR__TRANSPORT)
    public static let resolve = RDKafkaCode(RD_KAFKA_RESP_ERR__RESOLVE)
    public static let allBrokersDown = RDKafkaCode(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    public static let partitionEOF = RDKafkaCode(RD_KAFKA_RESP_ERR__PARTITION_EOF)
    public static let assignPartitions = RDKafkaCode(RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
    public static let revokePartitions = RDKafkaCode(RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
    public static let noOffset = RDKafkaCode(RD_KAFKA_RESP_ERR__NO_OFFSET)
    public static let topicAlreadyExists = RDKafkaCode(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    public static let unknownTopicOrPartition = RDKafkaCode(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    /// The broker fenced this (idempotent) producer: a newer one took its id, or its epoch was bumped.
    public static let producerFenced = RDKafkaCode(RD_KAFKA_RESP_ERR_PRODUCER_FENCED)
    public static let invalidProducerEpoch = RDKafkaCode(RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH)
    public static let purgeQueue = RDKafkaCode(RD_KAFKA_RESP_ERR__PURGE_QUEUE)
    public static let purgeInflight = RDKafkaCode(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)
    public static let state = RDKafkaCode(RD_KAFKA_RESP_ERR__STATE)
    public static let groupIDNotFound = RDKafkaCode(RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND)

    /// librdkafka's symbolic name, e.g. `_MSG_TIMED_OUT`.
    public var name: String { String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(self.rawValue))) }
    /// librdkafka's description of the code.
    public var message: String { String(cString: rd_kafka_err2str(rd_kafka_resp_err_t(self.rawValue))) }

    /// Codes that describe a passing condition of the network or broker.
    var isRetriable: Bool {
        switch self {
        case .queueFull, .timedOut, .messageTimedOut, .transport, .allBrokersDown, .resolve: true
        default: false
        }
    }

    public var description: String { self.name }
}

extension RDKafkaCode {
    /// The request timed out, the connection failed, or every broker is down: no broker answered.
    var meansNoBrokerAnswered: Bool { self == .timedOut || self == .transport || self == .allBrokersDown }
}
