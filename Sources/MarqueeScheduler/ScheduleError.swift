/// Why a schedule file was refused: where (file, line, column), which schedule, job and field, and what is
/// wrong, e.g. `schedule.yaml:14:15: schedule 'kofic-daily', job 1: field 'date': expected a date as yyyyMMdd`.
public struct ScheduleError: Error, CustomStringConvertible, Sendable {
    /// The kind of a ``ScheduleError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String
        /// The file cannot be read.
        public static let unreadable = Code(name: "unreadable")
        /// The file is not YAML.
        public static let syntax = Code(name: "syntax")
        /// A value is missing, unknown or wrong.
        public static let invalid = Code(name: "invalid")
        /// An expanded job is one the fetch stage would refuse.
        public static let invalidJob = Code(name: "invalidJob")

        public var description: String { self.name }
    }

    /// The kind of problem.
    public var code: Code
    /// The file as named to the loader.
    public var file: String
    /// 1-based line and column, when known.
    public var line: Int?
    public var column: Int?
    /// `schedule 'kofic-daily', job 1`, or `nil` outside a schedule.
    public var context: String?
    /// What is wrong, naming the field.
    public var reason: String

    public init(_ code: Code, file: String, line: Int? = nil, column: Int? = nil, context: String? = nil, _ reason: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.context = context
        self.reason = reason
    }

    public var description: String {
        var location = self.file
        if let line { location += ":\(line)" + (self.column.map { ":\($0)" } ?? "") }
        return "\(location): " + (self.context.map { "\($0): " } ?? "") + self.reason
    }
}
