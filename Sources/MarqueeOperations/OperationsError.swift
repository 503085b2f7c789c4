public import MarqueeCore

/// A request of the operator's tools that cannot be carried out as asked, in words for the operator: flags that
/// cannot make fetch jobs, a dead letter's malformed id or a stage the pipeline lacks, input `reset-offsets`
/// cannot act on, a setting of the pipeline layout that cannot be used.
///
/// None is retriable: the request must change. `marquee` shows them as usage or configuration errors.
public struct OperationsError: RetriableError, Sendable, Hashable {
    /// What the request was about.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String
        /// `marquee enqueue`'s flags or JSON lines.
        public static let enqueue = Code(name: "enqueue")
        /// Dead letters: an id, a stage, a time, a filter.
        public static let deadLetters = Code(name: "deadLetters")
        /// `marquee groups reset-offsets`: a mode, a time, a topic or partition, nothing to reset.
        public static let offsetReset = Code(name: "offsetReset")
        /// The pipeline layout's settings (`MARQUEE_WORKERS`, the topic prefix, the groups).
        public static let layout = Code(name: "layout")

        public var description: String { self.name }
    }

    public var code: Code
    /// What is wrong, naming the flag or setting.
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether asking again unchanged can help: never.
    public var isRetriable: Bool { false }

    /// The reason.
    public var description: String { self.reason }
}
