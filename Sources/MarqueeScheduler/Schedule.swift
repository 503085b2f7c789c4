public import MarqueeCore

public import struct Foundation.TimeZone

/// One named schedule of a schedule file: when it fires, in which zone, what it enqueues each time, and what to
/// do about windows missed while no producer ran.
public struct Schedule: Sendable {
    /// What to do with windows whose time came while no producer was running.
    public enum CatchUp: Hashable, Sendable, CustomStringConvertible {
        /// Fire only the latest missed window (the default): today's box office, not a week of them.
        case latest
        /// Fire every missed window, oldest first, at most this many (the latest ones).
        case all(limit: Int)
        /// Fire a window only if its time came less than ``Schedule/onTimeGrace`` ago; older ones are skipped.
        case none

        public var description: String {
            switch self {
            case .latest: "latest"
            case .all(let limit): "all (at most \(limit))"
            case .none: "none"
            }
        }
    }

    /// How late a window may be fired with ``CatchUp/none``: 1 minute.
    public static let onTimeGrace: Int64 = 60_000

    /// The most windows ``CatchUp/all`` fires after a downtime.
    public static let maximumCatchUp = 1000

    /// Unique in the file: part of every job id and of the state records' key.
    public var name: String
    /// When it fires.
    public var timing: Timing
    /// Its zone: the wall clock of ``timing`` and the day of the date placeholders.
    public var calendar: ZonedCalendar
    /// What to do with windows missed while no producer ran.
    public var catchUp: CatchUp
    /// What it enqueues each window, in order.
    public var templates: [JobTemplate]

    public init(name: String, timing: Timing, zone: TimeZone, catchUp: CatchUp = .latest, templates: [JobTemplate]) {
        self.name = name
        self.timing = timing
        self.calendar = ZonedCalendar(zone: zone)
        self.catchUp = catchUp
        self.templates = templates
    }

    /// Jobs per window.
    public var jobCount: Int { self.templates.reduce(0) { $0 + $1.count } }

    /// The jobs of the window that starts at `window` (epoch milliseconds), in order: a job's index in this
    /// array is part of its id.
    ///
    /// - Throws: A ``SchedulerError`` when a template gives a job the fetch stage would refuse.
    public func jobs(for window: Int64) throws(SchedulerError) -> [FetchJob] {
        let date = self.calendar.localDate(at: window)
        var jobs: [FetchJob] = []
        for template in self.templates { jobs += try template.jobs(for: date) }
        return jobs
    }

    /// The id of the `index`th job of the window starting at `window`: the same every time it is computed, so a
    /// window sent again carries the same ids (see ``JobID/deterministic(milliseconds:name:)``).
    public func jobID(window: Int64, index: Int) -> JobID {
        JobID.deterministic(
            milliseconds: UInt64(max(window, 0)),
            name: "marquee-producer/\(self.name)/\(window)/\(index)"
        )
    }
}
