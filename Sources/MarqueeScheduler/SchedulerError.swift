public import MarqueeCore

/// Why the scheduler refused something: a schedule file (where: file, line, column; which schedule, job and
/// field), a template whose jobs the fetch stage would refuse, or the topics the producer needs, e.g.
/// `schedule.yaml:14:15: schedule 'kofic-daily', job 1: field 'date': expected a date as yyyyMMdd`.
///
/// None is retriable: each needs the operator (a corrected file, the stages' topics created).
public struct SchedulerError: RetriableError, Sendable {
    /// The kind of a ``SchedulerError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String
        /// The schedule file cannot be read.
        public static let unreadable = Code(name: "unreadable")
        /// The schedule file is not YAML.
        public static let syntax = Code(name: "syntax")
        /// A value of the schedule file is missing, unknown or wrong.
        public static let invalid = Code(name: "invalid")
        /// An expanded job is one the fetch stage would refuse.
        public static let invalidJob = Code(name: "invalidJob")
        /// A topic the producer needs is missing or not as it must be.
        public static let topic = Code(name: "topic")

        public var description: String { self.name }
    }

    /// The kind of problem.
    public var code: Code
    /// The schedule file as named to the loader, when the problem is in one.
    public var file: String?
    /// 1-based line and column, when known.
    public var line: Int?
    public var column: Int?
    /// `schedule 'kofic-daily', job 1`, or `nil` outside a schedule.
    public var context: String?
    /// The job's field at fault (a dotted path), when one is.
    public var field: String?
    /// What is wrong, naming the field.
    public var reason: String

    public init(
        _ code: Code,
        file: String? = nil,
        line: Int? = nil,
        column: Int? = nil,
        context: String? = nil,
        field: String? = nil,
        _ reason: String
    ) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.context = context
        self.field = field
        self.reason = reason
    }

    /// Whether trying again unchanged can help: never (see the type's discussion).
    public var isRetriable: Bool { false }

    public var description: String {
        var location = self.file ?? ""
        if self.file != nil, let line { location += ":\(line)" + (self.column.map { ":\($0)" } ?? "") }
        let prefix = location.isEmpty ? "" : location + ": "
        return prefix + (self.context.map { "\($0): " } ?? "") + self.reason
    }
}
