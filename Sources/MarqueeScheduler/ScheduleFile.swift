import MarqueeCore
import MarqueeJSON
import Yams

import struct Foundation.Data
import class Foundation.FileManager
import struct Foundation.TimeZone

/// A schedule file (YAML, docs/producer.md): the schedules one `marquee-producer` deployment runs.
///
/// ```yaml
/// zone: Asia/Seoul            # default zone of every schedule (default UTC)
/// schedules:
///   - name: tmdb-lists
///     every: 1h
///     jobs:
///       - kind: tmdb.list
///         list: [popular, now_playing]
///         page: 1..5
///         language: [ko-KR, en-US]
///   - name: kofic-daily
///     at: "10:00"
///     jobs:
///       - {kind: kofic.boxoffice.daily, date: "${yesterday}", follow: {details: true}}
/// ```
///
/// Loading checks everything an operator can get wrong, and every job each template expands to with the fetch
/// stage's own decoding (for the next window), so a file that loads never sends a job a worker refuses.
public struct ScheduleFile: Sendable {
    /// The schedules, in file order; names are unique.
    public var schedules: [Schedule]

    public init(schedules: [Schedule]) { self.schedules = schedules }

    /// Reads and checks a schedule file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - now: The instant whose next windows the jobs are checked for (epoch milliseconds).
    /// - Throws: A ``SchedulerError`` naming the file, line, schedule and field.
    public static func load(path: String, now: Int64) throws(SchedulerError) -> ScheduleFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SchedulerError(.unreadable, file: path, "cannot read the schedule file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SchedulerError(.unreadable, file: path, "the schedule file is not UTF-8")
        }
        return try self.parse(yaml: text, file: path, now: now)
    }

    /// Parses and checks a schedule file's text (see ``load(path:now:)``).
    public static func parse(yaml: String, file: String, now: Int64) throws(SchedulerError) -> ScheduleFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw Self.syntaxError(error, file: file)
        } catch {
            throw SchedulerError(.syntax, file: file, "\(error)")
        }
        var parser = Parser(file: file)
        return try parser.file(root, now: now)
    }

    private static func syntaxError(_ error: YamlError, file: String) -> SchedulerError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return SchedulerError(.syntax, file: file, line: mark.line, column: mark.column, "not YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return SchedulerError(
                .syntax,
                file: file,
                line: context.mark.line,
                column: context.mark.column,
                "key '\(duplicates.joined(separator: "', '"))' appears twice"
            )
        default:
            return SchedulerError(.syntax, file: file, "not YAML: \(error)")
        }
    }
}

/// Reads the composed YAML tree, keeping each node's position for the errors.
private struct Parser {
    let file: String
    var context: String?

    init(file: String) { self.file = file }

    func fail(_ node: Node?, _ reason: String, code: SchedulerError.Code = .invalid) -> SchedulerError {
        SchedulerError(
            code,
            file: self.file,
            line: node?.mark?.line,
            column: node?.mark?.column,
            context: self.context,
            reason
        )
    }

    /// A mapping's entries by key, refusing keys not in `allowed`.
    func mapping(_ node: Node?, _ what: String, allowed: Set<String>) throws(SchedulerError) -> [(String, Node, Node)] {
        guard let node, let mapping = node.mapping else { throw self.fail(node, "\(what) must be a mapping") }
        var entries: [(String, Node, Node)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string else { throw self.fail(key, "a key of \(what) must be a name") }
            guard allowed.contains(name) else {
                throw self.fail(
                    key,
                    "unknown key '\(name)' in \(what); expected one of \(allowed.sorted().joined(separator: ", "))"
                )
            }
            entries.append((name, key, value))
        }
        return entries
    }

    func string(_ node: Node, _ field: String) throws(SchedulerError) -> String {
        guard let scalar = node.scalar else { throw self.fail(node, "field '\(field)' must be text") }
        return scalar.string
    }

    /// A scalar or a list of scalars, as texts.
    func strings(_ node: Node, _ field: String) throws(SchedulerError) -> [(String, Node)] {
        if let sequence = node.sequence {
            var values: [(String, Node)] = []
            for element in sequence { values.append((try self.string(element, field), element)) }
            guard !values.isEmpty else { throw self.fail(node, "field '\(field)' is an empty list") }
            return values
        }
        return [(try self.string(node, field), node)]
    }

    mutating func file(_ root: Node?, now: Int64) throws(SchedulerError) -> ScheduleFile {
        guard let root else { throw self.fail(nil, "the file is empty: expected a 'schedules' list") }
        let entries = try self.mapping(root, "the file", allowed: ["schedules", "zone", "catch_up"])
        var defaultZone = TimeZone(identifier: "UTC")!
        var defaultCatchUp = Schedule.CatchUp.latest
        var schedulesNode: Node?
        for (name, _, value) in entries {
            switch name {
            case "zone": defaultZone = try self.zone(value)
            case "catch_up": defaultCatchUp = try self.catchUp(value)
            default: schedulesNode = value
            }
        }
        guard let schedulesNode else { throw self.fail(root, "missing 'schedules': the list of schedules") }
        guard let sequence = schedulesNode.sequence, !sequence.isEmpty else {
            throw self.fail(schedulesNode, "'schedules' must be a non-empty list")
        }
        var schedules: [Schedule] = []
        var names: Set<String> = []
        for (index, node) in sequence.enumerated() {
            self.context = "schedule \(index + 1)"
            let schedule = try self.schedule(node, zone: defaultZone, catchUp: defaultCatchUp, now: now)
            guard names.insert(schedule.name).inserted else {
                throw self.fail(node, "two schedules are named '\(schedule.name)'")
            }
            schedules.append(schedule)
        }
        self.context = nil
        return ScheduleFile(schedules: schedules)
    }

    func zone(_ node: Node) throws(SchedulerError) -> TimeZone {
        let name = try self.string(node, "zone")
        guard let zone = TimeZone(identifier: name) else {
            throw self.fail(
                node,
                "field 'zone': '\(name)' is not an IANA time zone such as Asia/Seoul or America/New_York"
            )
        }
        return zone
    }

    func catchUp(_ node: Node) throws(SchedulerError) -> Schedule.CatchUp {
        let text = try self.string(node, "catch_up")
        switch text {
        case "latest": return .latest
        case "none": return .none
        case "all": return .all(limit: Schedule.maximumCatchUp)
        default:
            if let limit = Int(text), (1...Schedule.maximumCatchUp).contains(limit) { return .all(limit: limit) }
            throw self.fail(
                node,
                "field 'catch_up': expected latest, all, none or a number of windows from 1 to \(Schedule.maximumCatchUp), got '\(text)'"
            )
        }
    }

    mutating func schedule(
        _ node: Node,
        zone defaultZone: TimeZone,
        catchUp defaultCatchUp: Schedule.CatchUp,
        now: Int64
    ) throws(SchedulerError) -> Schedule {
        let entries = try self.mapping(
            node,
            "a schedule",
            allowed: ["name", "every", "at", "weekday", "zone", "catch_up", "jobs"]
        )
        var fields: [String: Node] = [:]
        for (name, _, value) in entries { fields[name] = value }
        guard let nameNode = fields["name"] else { throw self.fail(node, "a schedule needs a 'name'") }
        let name = try self.string(nameNode, "name")
        guard !name.isEmpty, name.count <= 100,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
        else {
            throw self.fail(nameNode, "field 'name': '\(name)' must be 1 to 100 letters, digits, '-', '_' or '.'")
        }
        self.context = "schedule '\(name)'"
        let zone = try fields["zone"].map { (node) throws(SchedulerError) in try self.zone(node) } ?? defaultZone
        let catchUp =
            try fields["catch_up"].map { (node) throws(SchedulerError) in try self.catchUp(node) } ?? defaultCatchUp
        let timing = try self.timing(fields, node: node)
        guard let jobsNode = fields["jobs"] else {
            throw self.fail(node, "a schedule needs 'jobs': a list of job templates")
        }
        guard let jobList = jobsNode.sequence, !jobList.isEmpty else {
            throw self.fail(jobsNode, "'jobs' must be a non-empty list")
        }
        var templates: [JobTemplate] = []
        for (index, jobNode) in jobList.enumerated() {
            templates.append(try self.template(jobNode, index: index + 1, scheduleName: name))
        }
        let schedule = Schedule(name: name, timing: timing, zone: zone, catchUp: catchUp, templates: templates)
        // Every job of the next window, through the fetch stage's decoding.
        let window = timing.window(after: now, in: schedule.calendar)
        let date = schedule.calendar.localDate(at: window)
        for (index, template) in templates.enumerated() {
            guard template.count <= JobTemplate.maximumJobs else {
                throw self.fail(
                    jobList[index],
                    "job \(index + 1) expands to \(template.count) jobs; at most \(JobTemplate.maximumJobs)"
                )
            }
            do {
                _ = try template.jobs(for: date)
            } catch {
                var located = error
                located.file = self.file
                located.context = "schedule '\(name)', job \(index + 1)"
                throw located
            }
        }
        return schedule
    }

    func timing(_ fields: [String: Node], node: Node) throws(SchedulerError) -> Timing {
        if let every = fields["every"] {
            for other in ["at", "weekday"] where fields[other] != nil {
                throw self.fail(
                    fields[other],
                    "'every' and '\(other)' cannot be combined: a schedule is either periodic or at set times"
                )
            }
            let text = try self.string(every, "every")
            guard let period = Self.milliseconds(text), period >= 1000, period <= 86_400_000 else {
                throw self.fail(
                    every,
                    "field 'every': expected a period from 1s to 24h such as 30s, 15m, 1h, got '\(text)'"
                )
            }
            return .every(periodMilliseconds: period)
        }
        guard let at = fields["at"] else {
            throw self.fail(
                node,
                "a schedule needs 'every' (e.g. every: 1h) or 'at' (e.g. at: \"10:00\", with weekday: monday for weekly)"
            )
        }
        var times: [LocalTime] = []
        for (text, element) in try self.strings(at, "at") {
            guard let time = LocalTime(parsing: text) else {
                throw self.fail(element, "field 'at': expected a time of day as HH:mm or HH:mm:ss, got '\(text)'")
            }
            times.append(time)
        }
        times = Array(Set(times)).sorted()
        guard let weekdayNode = fields["weekday"] else { return .daily(times: times) }
        var days: [Weekday] = []
        for (text, element) in try self.strings(weekdayNode, "weekday") {
            guard let day = Weekday(name: text) else {
                throw self.fail(element, "field 'weekday': expected monday … sunday (or mon … sun), got '\(text)'")
            }
            days.append(day)
        }
        return .weekly(days: Array(Set(days)).sorted(), times: times)
    }

    /// `500ms`, `30s`, `15m`, `1h`.
    static func milliseconds(_ text: String) -> Int64? {
        for (suffix, unit) in [("ms", Int64(1)), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(number),
                value <= 1_000_000_000
            else { return nil }
            return value * unit
        }
        return nil
    }

    func template(_ node: Node, index: Int, scheduleName: String) throws(SchedulerError) -> JobTemplate {
        guard let mapping = node.mapping else {
            throw self.fail(
                node,
                "job \(index) must be a mapping: a fetch job's fields, e.g. {kind: tmdb.list, list: popular}"
            )
        }
        var fields: [JobTemplate.Field] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                throw self.fail(key, "job \(index): a key must be a field name")
            }
            let location = value.mark.map { JobTemplate.Location(line: $0.line, column: $0.column) }
            if let sequence = value.sequence {
                var values: [JSONValue] = []
                for element in sequence { values.append(try self.json(element, field: name, index: index)) }
                guard !values.isEmpty else { throw self.fail(value, "job \(index): field '\(name)' is an empty list") }
                fields.append(.init(name: name, values: values, isExpanded: true, location: location))
            } else if name == "page", let scalar = value.scalar, let range = Self.range(scalar.string) {
                fields.append(
                    .init(name: name, values: range.map { .integer($0) }, isExpanded: true, location: location)
                )
            } else {
                fields.append(
                    .init(
                        name: name,
                        values: [try self.json(value, field: name, index: index)],
                        isExpanded: false,
                        location: location
                    )
                )
            }
        }
        let template = JobTemplate(fields: fields, location: node.mark.map { .init(line: $0.line, column: $0.column) })
        if template.count > JobTemplate.maximumJobs {
            throw self.fail(node, "job \(index) expands to \(template.count) jobs; at most \(JobTemplate.maximumJobs)")
        }
        return template
    }

    /// `1..5`.
    static func range(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: true)
        guard text.contains(".."), parts.count == 2, let first = Int64(parts[0].trimmingWhitespace()),
            let last = Int64(parts[1].trimmingWhitespace()), first <= last, last - first < 10_000
        else { return nil }
        return first...last
    }

    /// A YAML value as JSON. Plain scalars: `true`/`false`, integers and decimals are typed, `null` and `~` are
    /// null, anything else is text (so `NO` stays the region of Norway); quoted scalars are always text.
    func json(_ node: Node, field: String, index: Int) throws(SchedulerError) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            let text = scalar.string
            guard scalar.style == .plain else { return .string(text) }
            switch text {
            case "true", "True", "TRUE": return .bool(true)
            case "false", "False", "FALSE": return .bool(false)
            case "null", "Null", "NULL", "~", "": return .null
            default: break
            }
            let digits = text.hasPrefix("-") || text.hasPrefix("+") ? text.dropFirst() : Substring(text)
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(text) {
                return .integer(value)
            }
            if digits.contains("."), digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let value = Double(text)
            {
                return .number(value)
            }
            return .string(text)
        case .mapping(let mapping):
            var members: JSONObject = [:]
            for (key, value) in mapping {
                guard let name = key.scalar?.string else {
                    throw self.fail(key, "job \(index): field '\(field)': a key must be a name")
                }
                members[name] = try self.json(value, field: "\(field).\(name)", index: index)
            }
            return .object(members)
        case .sequence(let sequence):
            var values: [JSONValue] = []
            for element in sequence { values.append(try self.json(element, field: field, index: index)) }
            return .array(values)
        case .alias:
            throw self.fail(node, "job \(index): field '\(field)': aliases are not supported")
        }
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
