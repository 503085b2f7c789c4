public import MarqueeCore
public import MarqueeJSON

/// One entry of a schedule's `jobs`: a fetch job's JSON form (docs/fetch.md) that expands into one or more jobs
/// per window.
///
/// - A field whose value is a list expands: one job per element, and several such fields give every
///   combination (the first field varies slowest). `page: 1..5` is the list 1, 2, 3, 4, 5.
/// - Every `${…}` in a string is a ``DateExpression`` for the window's day.
/// - `v` may be left out (it is the current payload version).
public struct JobTemplate: Sendable {
    /// Where a field was written in the schedule file.
    public struct Location: Hashable, Sendable {
        /// 1-based.
        public var line: Int
        /// 1-based, in Unicode scalars.
        public var column: Int

        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// One field of the template.
    public struct Field: Sendable {
        /// The payload field it sets.
        public var name: String
        /// One value, or the values to expand over.
        public var values: [JSONValue]
        /// Written as a list (or `A..B`): the template gives one job per value.
        public var isExpanded: Bool
        /// Where its value was written.
        public var location: Location?

        public init(name: String, values: [JSONValue], isExpanded: Bool, location: Location?) {
            self.name = name
            self.values = values
            self.isExpanded = isExpanded
            self.location = location
        }
    }

    /// The most jobs one template may expand to in one window.
    public static let maximumJobs = 10_000

    /// The fields, in the order written (the first varies slowest).
    public var fields: [Field]
    /// Where the template starts.
    public var location: Location?

    public init(fields: [Field], location: Location?) {
        self.fields = fields
        self.location = location
    }

    /// How many jobs the template expands to (the same for every window).
    public var count: Int {
        self.fields.reduce(1) { $0 * $1.values.count }
    }

    /// The jobs of the window whose day (in the schedule's zone) is `date`, in expansion order.
    ///
    /// - Throws: A ``SchedulerError`` (``SchedulerError/Code/invalidJob``) naming the field whose value is wrong, and
    ///   where it was written.
    public func jobs(for date: LocalDate) throws(SchedulerError) -> [FetchJob] {
        var objects: [JSONObject] = [[:]]
        for field in self.fields {
            var values: [JSONValue] = []
            for value in field.values {
                values.append(try Self.substitute(value, date: date, field: field))
            }
            objects = objects.flatMap { object in
                values.map { value in
                    var object = object
                    object[field.name] = value
                    return object
                }
            }
        }
        var jobs: [FetchJob] = []
        jobs.reserveCapacity(objects.count)
        for var object in objects {
            if object["v"] == nil { object["v"] = .integer(FetchJob.version) }
            do {
                jobs.append(try FetchJob.decode(json: .object(object)))
            } catch {
                let name = error.field.map { String($0.prefix { $0 != "." && $0 != "[" }) }
                let field = self.fields.first { $0.name == name }
                let location = field?.location ?? self.location
                throw SchedulerError(
                    .invalidJob,
                    line: location?.line,
                    column: location?.column,
                    field: error.field,
                    error.description
                )
            }
        }
        return jobs
    }

    private static func substitute(
        _ value: JSONValue,
        date: LocalDate,
        field: Field
    ) throws(SchedulerError) -> JSONValue {
        switch value {
        case .string(let text):
            switch DateExpression.substitute(text, date: date) {
            case .success(let text): return .string(text)
            case .failure(let error):
                throw SchedulerError(
                    .invalidJob,
                    line: field.location?.line,
                    column: field.location?.column,
                    field: field.name,
                    "field '\(field.name)': '\(error.text)' is not a date placeholder "
                        + "(${today}, ${yesterday}, ${week}, optionally -Nd, +Nd, -Nw, +Nw and :iso)"
                )
            }
        case .array(let values):
            var substituted: [JSONValue] = []
            for value in values { substituted.append(try Self.substitute(value, date: date, field: field)) }
            return .array(substituted)
        case .object(let members):
            return .object(
                try members.mapValues { (value) throws(SchedulerError) in
                    try Self.substitute(value, date: date, field: field)
                }
            )
        case .null, .bool, .integer, .number:
            return value
        }
    }
}
