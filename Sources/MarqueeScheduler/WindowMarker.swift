import MarqueeCore
public import MarqueeJSON

/// A record of the producer's state topic (`<prefix>producer.windows`): a replica's claim on a window, the
/// confirmation that a window's jobs were all acknowledged, or a probe a new leader reads back to know it has
/// read everything before it.
///
/// JSON, e.g. `{"v":1,"kind":"producer.window","phase":"claimed","schedule":"kofic-daily","window":1717030800000,
/// "owner":"host/812/4f2a","at":1717030800012,"jobs":1}`; keyed by the schedule's name (the probe by `probe`), so
/// a compacted topic keeps each schedule's latest record.
public struct WindowMarker: Hashable, Sendable {
    /// What a marker says.
    public enum Phase: String, Hashable, Sendable {
        /// The owner means to send the window's jobs (or to skip the window, with ``WindowMarker/skips``). The
        /// first claim of a window in the topic wins; a later one loses unless it supersedes a stale winner.
        case claimed
        /// Every job of the window was acknowledged by the broker (or the window was skipped): it is settled.
        case done
        /// A new leader's marker: once it has read this back, it has read every record written before.
        case probe
    }

    /// What it says.
    public var phase: Phase
    /// The schedule (empty for a probe).
    public var schedule: String
    /// The window's start, epoch milliseconds (0 for a probe).
    public var window: Int64
    /// The replica process that wrote it.
    public var owner: String
    /// When it was written (the owner's clock, epoch milliseconds).
    public var at: Int64
    /// For a takeover claim: the offset of the stale claim it replaces.
    public var supersedes: Int64?
    /// Jobs in the window.
    public var jobs: Int
    /// The claim is to skip the window (a missed window the schedule's catch-up policy leaves out).
    public var skips: Bool

    public init(
        phase: Phase,
        schedule: String,
        window: Int64,
        owner: String,
        at: Int64,
        supersedes: Int64? = nil,
        jobs: Int = 0,
        skips: Bool = false
    ) {
        self.phase = phase
        self.schedule = schedule
        self.window = window
        self.owner = owner
        self.at = at
        self.supersedes = supersedes
        self.jobs = jobs
        self.skips = skips
    }

    /// The payload kind of every marker.
    public static let kind = "producer.window"

    /// The record key: the schedule's name, or `probe`.
    public var key: String { self.phase == .probe ? "probe" : self.schedule }

    /// The JSON form.
    public var json: JSONValue {
        var fields: JSONObject = [
            "v": .integer(1), "kind": .string(Self.kind), "phase": .string(self.phase.rawValue),
            "owner": .string(self.owner), "at": .integer(self.at),
        ]
        if self.phase != .probe {
            fields["schedule"] = .string(self.schedule)
            fields["window"] = .integer(self.window)
            fields["jobs"] = .integer(Int64(self.jobs))
        }
        if let supersedes = self.supersedes { fields["supersedes"] = .integer(supersedes) }
        if self.skips { fields["skips"] = .bool(true) }
        return .object(fields)
    }

    /// The payload bytes.
    public func encoded() -> [UInt8] { self.json.encoded() }

    /// Reads a marker; `nil` for anything else (a record this version does not know is ignored, not fatal).
    public static func decode(_ bytes: [UInt8]) -> WindowMarker? {
        guard case .object(let fields)? = try? JSONValue.parse(bytes), fields["v"] == .integer(1),
            fields["kind"] == .string(Self.kind),
            case .string(let phaseText)? = fields["phase"], let phase = Phase(rawValue: phaseText),
            case .string(let owner)? = fields["owner"], case .integer(let at)? = fields["at"]
        else { return nil }
        var marker = WindowMarker(phase: phase, schedule: "", window: 0, owner: owner, at: at)
        if phase != .probe {
            guard case .string(let schedule)? = fields["schedule"], case .integer(let window)? = fields["window"],
                case .integer(let jobs)? = fields["jobs"]
            else { return nil }
            marker.schedule = schedule
            marker.window = window
            marker.jobs = Int(clamping: jobs)
        }
        if case .integer(let supersedes)? = fields["supersedes"] { marker.supersedes = supersedes }
        if case .bool(let skips)? = fields["skips"] { marker.skips = skips }
        return marker
    }
}
