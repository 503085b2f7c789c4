/// The delivery facts of a job, carried in Kafka headers so the payload is never rewritten (docs/design.md, "Envelope").
public struct Envelope: Hashable, Sendable {
    /// The header names: a contract between stages, tools and operators.
    public enum Header {
        public static let id = "marquee-id"
        public static let root = "marquee-root"
        public static let parent = "marquee-parent"
        public static let attempt = "marquee-attempt"
        public static let notBefore = "marquee-not-before"
        public static let origin = "marquee-origin"
        public static let error = "marquee-error"
        public static let errorKind = "marquee-error-kind"
        public static let traceparent = "traceparent"
        /// Why the crawl this job belongs to was made (``RefreshReason``); spawned jobs and records inherit it.
        public static let refresh = "marquee-refresh"
        /// `topic/partition/offset` of the dead letter a replayed job came from (`marquee dlq replay`).
        public static let replayedFrom = "marquee-replayed-from"
        /// On a dead letter whose original was too large for the topic: the original value's size in bytes (the
        /// letter keeps what fits).
        public static let originalSize = "marquee-original-size"
        /// On such a letter: the SHA-256 of the original value, in hex.
        public static let originalSHA256 = "marquee-original-sha256"
        /// On such a letter: where the whole original was kept (an image or object store's URL), when one is
        /// configured.
        public static let originalLocation = "marquee-original-location"
    }

    /// How a job failed, as the `marquee-error-kind` header says it.
    public enum ErrorKind: String, Hashable, Sendable, CaseIterable {
        /// It may work later: the next retry tier, then the DLQ.
        case transient
        /// It will never work as it is: the DLQ at once.
        case permanent
        /// It could not even be read: the DLQ with its bytes untouched.
        case poison
    }

    /// This job.
    public var id: JobID
    /// The job an operator enqueued, at the root of this one's lineage.
    public var root: JobID
    /// The job that spawned this one (`nil` for a root).
    public var parent: JobID?
    /// 1 on first delivery, +1 per retry.
    public var attempt: Int
    /// Epoch milliseconds before which a retry tier must not run the job.
    public var notBefore: Int64?
    /// `topic/partition/offset` where the job first failed.
    public var origin: String?
    /// The last error, secrets redacted.
    public var error: String?
    public var errorKind: ErrorKind?
    /// W3C trace context.
    public var traceparent: String?
    /// Why the crawl this job belongs to was made; `nil` when whoever enqueued the root did not say (the fetch
    /// stage then takes the reason its kind implies, ``RefreshReason/implied(by:)``).
    public var refresh: RefreshReason?

    /// A root job, as an operator enqueues it.
    public static func root(
        id: JobID = .make(),
        traceparent: String? = nil,
        refresh: RefreshReason? = nil
    ) -> Envelope {
        Envelope(id: id, root: id, parent: nil, attempt: 1, traceparent: traceparent, refresh: refresh)
    }

    public init(
        id: JobID,
        root: JobID,
        parent: JobID?,
        attempt: Int,
        notBefore: Int64? = nil,
        origin: String? = nil,
        error: String? = nil,
        errorKind: ErrorKind? = nil,
        traceparent: String? = nil,
        refresh: RefreshReason? = nil
    ) {
        self.id = id
        self.root = root
        self.parent = parent
        self.attempt = attempt
        self.notBefore = notBefore
        self.origin = origin
        self.error = error
        self.errorKind = errorKind
        self.traceparent = traceparent
        self.refresh = refresh
    }

    /// A job this one spawned: same root, trace and refresh reason, this job as parent, first attempt.
    public func child(id: JobID = .make()) -> Envelope {
        Envelope(
            id: id,
            root: self.root,
            parent: self.id,
            attempt: 1,
            traceparent: self.traceparent,
            refresh: self.refresh
        )
    }

    /// The child for the `index`th output of this job to `stage` (keyed `key`), with an id derived from this
    /// job's id and those three: a job handled twice (at-least-once: redelivered after a crash before its commit)
    /// gives its outputs the same ids both times, so the lineage holds each spawned job once however often its
    /// parent ran. (A stage counts `index` per output stage, so a run with fewer records spawns the same jobs.)
    /// The timestamp part is this job's, so children sort with their parent.
    public func child(output index: Int, stage: String, key: String) -> Envelope {
        self.children.child(output: index, stage: stage, key: key)
    }

    /// Makes ``child(output:stage:key:)`` for each output of one job, reading this job's id once for all of them.
    public var children: Children { Children(parent: self) }

    /// The children of one job's outputs: ``Envelope/child(output:stage:key:)`` with this job's timestamp and the
    /// hash of its id worked out once.
    public struct Children: Sendable {
        private let parent: Envelope
        private let milliseconds: UInt64
        /// The hash of "<id>\u{1F}", which every child's name starts with.
        private let prefix: JobID.NameHash

        init(parent: Envelope) {
            self.parent = parent
            self.milliseconds = parent.id.milliseconds ?? JobID.nowMilliseconds()
            var prefix = JobID.NameHash()
            prefix.add(parent.id.rawValue.utf8)
            prefix.add(0x1F)
            self.prefix = prefix
        }

        public func child(output index: Int, stage: String, key: String) -> Envelope {
            // The name "<id>\u{1F}<index>\u{1F}<stage>\u{1F}<key>", hashed part by part rather than joined first.
            var name = self.prefix
            name.add(String(index).utf8)
            name.add(0x1F)
            name.add(stage.utf8)
            name.add(0x1F)
            name.add(key.utf8)
            return self.parent.child(id: .deterministic(milliseconds: self.milliseconds, hash: name))
        }
    }

    /// The headers, as name/value pairs, in a stable order.
    public var headers: [(String, String)] {
        var headers: [(String, String)] = []
        headers.reserveCapacity(self.headerCount)
        self.forEachHeader { headers.append(($0, $1)) }
        return headers
    }

    /// How many headers ``headers`` has.
    public var headerCount: Int {
        var count = 0
        self.forEachHeader { _, _ in count += 1 }
        return count
    }

    /// Calls `body` with each header's name and value, in the order of ``headers``, without building the array
    /// (a stage writes them straight into its messages' headers).
    public func forEachHeader(_ body: (String, String) -> Void) {
        body(Header.id, self.id.rawValue)
        body(Header.root, self.root.rawValue)
        body(Header.attempt, String(self.attempt))
        if let parent { body(Header.parent, parent.rawValue) }
        if let notBefore { body(Header.notBefore, String(notBefore)) }
        if let origin { body(Header.origin, origin) }
        if let error { body(Header.error, error) }
        if let errorKind { body(Header.errorKind, errorKind.rawValue) }
        if let traceparent { body(Header.traceparent, traceparent) }
        if let refresh { body(Header.refresh, refresh.rawValue) }
    }

    /// Reads an envelope from headers (the last value of a repeated header wins).
    ///
    /// - Throws: A ``PayloadError`` naming the missing or malformed header.
    public init(headers: [(String, String?)]) throws(PayloadError) {
        // The envelope's headers by name, each the last value given (others are not the envelope's).
        var id: String?
        var root: String?
        var parent: String?
        var attemptHeader: String?
        var notBeforeText: String?
        var origin: String?
        var error: String?
        var errorKind: String?
        var traceparent: String?
        var refresh: String?
        for case let (name, value?) in headers {
            switch name {
            case Header.id: id = value
            case Header.root: root = value
            case Header.parent: parent = value
            case Header.attempt: attemptHeader = value
            case Header.notBefore: notBeforeText = value
            case Header.origin: origin = value
            case Header.error: error = value
            case Header.errorKind: errorKind = value
            case Header.traceparent: traceparent = value
            case Header.refresh: refresh = value
            default: continue
            }
        }
        guard let idText = id, !idText.isEmpty else {
            throw PayloadError(.missingField, field: "header \(Header.id)", "required")
        }
        for (header, value) in [(Header.id, idText), (Header.root, root), (Header.parent, parent)] {
            guard let value, !JobID.isWellFormed(value) else { continue }
            throw PayloadError(
                .invalidField,
                field: "header \(header)",
                "expected a job id (1 to 64 letters, digits, '-' or '_', such as a ULID), got '\(Self.printable(value.prefix(40)))'"
            )
        }
        let jobID = JobID(rawValue: idText)
        let rootID = root.map(JobID.init(rawValue:)) ?? jobID
        let attemptText = attemptHeader ?? "1"
        guard let attempt = Int(attemptText), attempt >= 1, attempt <= 1000 else {
            throw PayloadError(
                .invalidField,
                field: "header \(Header.attempt)",
                "expected a number from 1 to 1000, got '\(attemptText.prefix(40))'"
            )
        }
        var notBefore: Int64?
        if let text = notBeforeText {
            guard let value = Int64(text), value >= 0 else {
                throw PayloadError(
                    .invalidField,
                    field: "header \(Header.notBefore)",
                    "expected epoch milliseconds, got '\(text.prefix(40))'"
                )
            }
            notBefore = value
        }
        self.init(
            id: jobID,
            root: rootID,
            parent: parent.map(JobID.init(rawValue:)),
            attempt: attempt,
            notBefore: notBefore,
            origin: origin,
            error: error,
            errorKind: errorKind.flatMap(ErrorKind.init(rawValue:)),
            traceparent: traceparent,
            // A reason this program does not know (a newer producer's) is as good as none: the kind's own applies.
            refresh: refresh.flatMap(RefreshReason.init(rawValue:))
        )
    }

    /// `text` with anything but printable ASCII shown as `?`, for error messages about hostile headers.
    static func printable(_ text: Substring) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { (0x20...0x7E).contains($0.value) ? $0 : "?" }))
    }

    public static func == (lhs: Envelope, rhs: Envelope) -> Bool {
        lhs.headers.map { "\($0.0)=\($0.1)" } == rhs.headers.map { "\($0.0)=\($0.1)" }
    }

    public func hash(into hasher: inout Hasher) {
        for (name, value) in self.headers {
            hasher.combine(name)
            hasher.combine(value)
        }
    }
}
