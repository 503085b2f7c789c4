import MarqueeCore
public import MarqueeKafka
import MarqueePipeline

/// A message a stage parked in its dead-letter topic, with what its headers and payload say about it.
///
/// Decoding never fails: a poison message (bytes that are not JSON, headers that are not an envelope) is a dead
/// letter too, with `unknown` where a fact cannot be read. The record itself is kept untouched for `show` and
/// `replay`.
public struct DeadLetter: Sendable, Hashable {
    /// Where it is: `stage/partition/offset`.
    public var id: DeadLetterID
    /// The record as the dead-letter topic holds it: key, payload, headers and timestamp.
    public var record: KafkaRecord
    /// The payload's `kind` when it is one Marquee knows (a fetch job, an image job, a record), else
    /// ``PayloadKind/unknown`` (unreadable bytes, a kind from elsewhere).
    public var kind: String
    /// `transient` (its retry tiers ran out), `permanent`, `poison`, or ``unknownErrorKind`` when the header is
    /// missing or says something else.
    public var errorKind: String
    /// The last error (`marquee-error`), secrets redacted by the stage.
    public var error: String?
    /// `marquee-attempt`: how many times the stage ran it (`nil` when the header is missing or not a number).
    public var attempt: Int?
    /// `marquee-origin`: `topic/partition/offset` where the job first failed.
    public var origin: String?
    /// `marquee-id`: the job.
    public var jobID: String?
    /// `marquee-root`: the job an operator enqueued, at the root of this one's lineage.
    public var root: String?
    /// `marquee-parent`: the job that spawned this one.
    public var parent: String?
    /// Whether the dead-letter reader group's committed offset is past it (see ``DeadLetterQueue``): purged
    /// letters are hidden unless asked for, never deleted.
    public var isPurged: Bool

    /// The error kind of a letter whose `marquee-error-kind` header is missing or not one of the three.
    public static let unknownErrorKind = "unknown"

    /// Reads a dead letter from a record of a stage's dead-letter topic.
    ///
    /// A header that repeats counts with its last value, as the stage reads it (a poison message keeps its own
    /// headers and gets the error headers appended).
    ///
    /// - Parameters:
    ///   - record: The record as read from `<prefix><stage>.dlq`.
    ///   - stage: The stage whose dead-letter topic holds it.
    ///   - isPurged: Whether the reader group's committed offset is past it.
    public init(record: KafkaRecord, stage: String, isPurged: Bool = false) {
        func header(_ name: String) -> String? {
            record.headers.string(name).flatMap { $0.isEmpty ? nil : $0 }
        }
        self.id = DeadLetterID(stage: stage, partition: record.partition.partition, offset: record.offset)
        self.record = record
        self.kind = PayloadKind.peek(record.value)
        self.errorKind =
            header(Envelope.Header.errorKind).flatMap { Envelope.ErrorKind(rawValue: $0)?.rawValue }
            ?? Self.unknownErrorKind
        self.error = header(Envelope.Header.error)
        self.attempt = header(Envelope.Header.attempt).flatMap { Int($0) }
        self.origin = header(Envelope.Header.origin)
        self.jobID = header(Envelope.Header.id)
        self.root = header(Envelope.Header.root)
        self.parent = header(Envelope.Header.parent)
        self.isPurged = isPurged
    }

    /// Whether the stage could not read it (`marquee-error-kind: poison`): its bytes are kept as they arrived.
    public var isPoison: Bool { self.errorKind == Envelope.ErrorKind.poison.rawValue }

    /// When it was dead-lettered: the record's timestamp, in milliseconds since the epoch.
    public var timestamp: Int64? { self.record.timestamp }

    /// How long ago it was dead-lettered, in milliseconds (`nil` when the record has no timestamp).
    public func age(nowMilliseconds: Int64) -> Int64? {
        self.timestamp.map { max(0, nowMilliseconds - $0) }
    }

    /// The letter's offset in its dead-letter partition.
    public var offset: Int64 { self.record.offset }

    /// The order lists use: oldest first (by timestamp, letters without one first), then by id.
    public static func isOlder(_ lhs: DeadLetter, than rhs: DeadLetter) -> Bool {
        (lhs.timestamp ?? .min, lhs.id) < (rhs.timestamp ?? .min, rhs.id)
    }
}

/// Where a dead letter is: its stage, and the partition and offset in that stage's dead-letter topic. Written
/// `stage/partition/offset`, e.g. `fetch/2/17`.
public struct DeadLetterID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The stage whose dead-letter topic holds it (`fetch`, `images`, `records`).
    public var stage: String
    /// The partition of `<prefix><stage>.dlq`.
    public var partition: Int32
    /// The offset in that partition.
    public var offset: Int64

    /// The letter at `offset` of `partition` of the stage's dead-letter topic.
    public init(stage: String, partition: Int32, offset: Int64) {
        self.stage = stage
        self.partition = partition
        self.offset = offset
    }

    /// Reads `stage/partition/offset`, where the stage may also be written as its dead-letter topic
    /// (`marquee.fetch.dlq/2/17`, the form of `marquee-origin` and `marquee-replayed-from`).
    ///
    /// - Throws: A ``OperationsError`` saying what is wrong: the shape, a number, or a stage the layout does not
    ///   have.
    public init(parsing text: String, layout: PipelineLayout) throws(OperationsError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3 else {
            throw OperationsError(
                .deadLetters,
                "'\(text)' is not a dead letter id: expected stage/partition/offset, e.g. fetch/2/17"
            )
        }
        let name = parts.dropLast(2).joined(separator: "/")
        guard let partition = Int32(parts[parts.count - 2]), partition >= 0 else {
            throw OperationsError(.deadLetters, "'\(text)': the partition '\(parts[parts.count - 2])' is not a number")
        }
        guard let offset = Int64(parts[parts.count - 1]), offset >= 0 else {
            throw OperationsError(.deadLetters, "'\(text)': the offset '\(parts[parts.count - 1])' is not a number")
        }
        guard let stage = layout.stage(name) ?? layout.stages.first(where: { $0.topics.dlq == name }) else {
            let names = layout.stages.map(\.name).joined(separator: ", ")
            throw OperationsError(.deadLetters, "'\(text)': no stage or dead-letter topic '\(name)' (stages: \(names))")
        }
        self.init(stage: stage.name, partition: partition, offset: offset)
    }

    /// `stage/partition/offset`.
    public var description: String { "\(self.stage)/\(self.partition)/\(self.offset)" }

    /// Stages in pipeline order (fetch, images, records; any other after them, alphabetically), then partition,
    /// then offset.
    public static func < (lhs: DeadLetterID, rhs: DeadLetterID) -> Bool {
        func rank(_ stage: String) -> Int {
            PipelineLayout.stageNames.firstIndex(of: stage) ?? PipelineLayout.stageNames.count
        }
        return (rank(lhs.stage), lhs.stage, lhs.partition, lhs.offset) < (
            rank(rhs.stage), rhs.stage, rhs.partition, rhs.offset
        )
    }
}
