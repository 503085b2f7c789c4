/// What the state topic says about every schedule's windows, and what the leader should do next: the
/// exactly-once logic of `marquee-producer`, free of Kafka and of the clock so it can be tested alone.
///
/// Records are applied with their offsets in the state topic's single partition, which orders every replica's
/// claims. Applying is idempotent (a new leader reads the topic from the start again; a record seen twice
/// changes nothing), so the ledger is a function of the topic's contents.
///
/// The rules:
/// - The **winner** of a window is its first claim (lowest offset) that supersedes nothing. A claim that
///   supersedes a winner (a takeover, written when the winner did not confirm within the claim timeout) becomes
///   the winner if it is the first to supersede it. Only a winner sends the window's jobs.
/// - A window is **settled** once any `done` marker for it exists; a claim written after the window was settled
///   never wins (a takeover that comes after the slow winner's confirmation sends nothing).
/// - A window claimed but not settled is **pending**; when its winner's claim is older than the claim timeout, the
///   leader takes it over and sends the same jobs with the same ids again.
public struct WindowLedger: Sendable {
    /// One claim, as read from the topic.
    public struct Claim: Hashable, Sendable {
        /// Where it is in the state topic.
        public var offset: Int64
        /// The replica process that wrote it.
        public var owner: String
        /// When it was written (the owner's clock, epoch milliseconds).
        public var at: Int64
        /// For a takeover: the offset of the stale claim it replaces.
        public var supersedes: Int64?
        /// The claim is to skip the window.
        public var skips: Bool
    }

    /// What the topic says about one window.
    public struct WindowState: Hashable, Sendable {
        /// In offset order.
        public var claims: [Claim] = []
        /// The offset of the first `done`, once there is one.
        public var settledOffset: Int64?

        /// Whether any `done` was read.
        public var isSettled: Bool { self.settledOffset != nil }

        /// The claim whose owner may send the window's jobs now.
        public var winner: Claim? {
            guard var current = self.claims.first(where: { $0.supersedes == nil }) else { return nil }
            while let next = self.claims.first(where: { $0.supersedes == current.offset }) { current = next }
            return current
        }
    }

    /// What the leader does next.
    public enum Action: Hashable, Sendable {
        /// Claim the window (superseding the stale winner at that offset, if any), and when the claim wins, send
        /// its jobs (or skip it) and confirm.
        case fire(schedule: String, window: Int64, supersedes: Int64?, skips: Bool)
        /// Nothing is due before this instant (epoch milliseconds).
        case wait(until: Int64)
    }

    /// How many settled windows per schedule are remembered; older ones are forgotten, and claims on windows
    /// older than every remembered one are ignored (a replica that was paused for that long).
    public static let remembered = 1000

    private var windows: [String: [Int64: WindowState]] = [:]
    /// Per schedule, the oldest window still remembered once forgetting started.
    private var horizon: [String: Int64] = [:]
    /// The highest offset applied.
    public private(set) var appliedOffset: Int64 = -1

    public init() {}

    /// Applies one record of the state topic.
    public mutating func apply(_ marker: WindowMarker, offset: Int64) {
        self.appliedOffset = max(self.appliedOffset, offset)
        guard marker.phase != .probe else { return }
        if let horizon = self.horizon[marker.schedule], marker.window < horizon { return }
        var state = self.windows[marker.schedule, default: [:]][marker.window, default: WindowState()]
        switch marker.phase {
        case .claimed:
            guard !state.claims.contains(where: { $0.offset == offset }) else { return }
            state.claims.append(
                Claim(
                    offset: offset,
                    owner: marker.owner,
                    at: marker.at,
                    supersedes: marker.supersedes,
                    skips: marker.skips
                )
            )
            state.claims.sort { $0.offset < $1.offset }
        case .done:
            state.settledOffset = min(state.settledOffset ?? offset, offset)
        case .probe:
            return
        }
        self.windows[marker.schedule, default: [:]][marker.window] = state
        if marker.phase == .done { self.forget(marker.schedule) }
    }

    /// Notes that records up to `offset` were read (a probe or a record this version ignores).
    public mutating func advance(to offset: Int64) {
        self.appliedOffset = max(self.appliedOffset, offset)
    }

    /// What the topic says about one window.
    public func state(schedule: String, window: Int64) -> WindowState? {
        self.windows[schedule]?[window]
    }

    /// Whether the claim written at `offset` is the window's winner, written before the window was settled.
    public func isWinner(schedule: String, window: Int64, offset: Int64) -> Bool {
        guard let state = self.windows[schedule]?[window], state.winner?.offset == offset else { return false }
        return state.settledOffset.map { $0 > offset } ?? true
    }

    /// The latest window of a schedule with any claim or confirmation.
    public func latestWindow(schedule: String) -> Int64? {
        self.windows[schedule]?.keys.max()
    }

    /// The latest settled window of a schedule.
    public func latestSettled(schedule: String) -> Int64? {
        self.windows[schedule]?.filter(\.value.isSettled).keys.max()
    }

    /// Windows claimed and not settled, oldest first.
    public func pending(schedule: String) -> [(window: Int64, state: WindowState)] {
        (self.windows[schedule] ?? [:]).filter { !$0.value.isSettled && !$0.value.claims.isEmpty }
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The next thing to do at `now`.
    ///
    /// - Parameters:
    ///   - schedules: The schedule file's schedules.
    ///   - now: Epoch milliseconds.
    ///   - since: When the deployment started looking: a schedule without any history fires only windows after
    ///     this (no history, no catch-up).
    ///   - claimTimeout: How long a winner may take to confirm before its window is taken over (milliseconds).
    public func next(schedules: [Schedule], now: Int64, since: Int64, claimTimeout: Int64) -> Action {
        var fire: (window: Int64, action: Action)?
        var wake = Int64.max
        func consider(_ window: Int64, _ action: Action) {
            if fire == nil || window < fire!.window { fire = (window, action) }
        }
        for schedule in schedules {
            for (window, state) in self.pending(schedule: schedule.name) {
                guard let winner = state.winner else { continue }
                let deadline = winner.at + claimTimeout
                if now >= deadline {
                    consider(
                        window,
                        .fire(schedule: schedule.name, window: window, supersedes: winner.offset, skips: winner.skips)
                    )
                } else {
                    wake = min(wake, deadline)
                }
            }
            let base = self.latestWindow(schedule: schedule.name) ?? since
            switch schedule.catchUp {
            case .latest:
                let window = schedule.timing.window(atOrBefore: now, in: schedule.calendar)
                if window > base {
                    consider(window, .fire(schedule: schedule.name, window: window, supersedes: nil, skips: false))
                }
            case .none:
                let window = schedule.timing.window(atOrBefore: now, in: schedule.calendar)
                if window > base {
                    let isLate = now - window > Schedule.onTimeGrace
                    consider(window, .fire(schedule: schedule.name, window: window, supersedes: nil, skips: isLate))
                }
            case .all(let limit):
                if let window = schedule.timing.windows(after: base, through: now, limit: limit, in: schedule.calendar)
                    .first
                {
                    consider(window, .fire(schedule: schedule.name, window: window, supersedes: nil, skips: false))
                }
            }
            wake = min(wake, schedule.timing.window(after: now, in: schedule.calendar))
        }
        return fire?.action ?? .wait(until: wake)
    }

    /// What a `catch_up: all` or `catch_up: N` schedule has missed at `now`: the windows it will send, oldest
    /// first, and those older than its limit that it will not (a gap that needs a backfill).
    public struct CatchUp: Hashable, Sendable {
        /// The schedule.
        public var schedule: String
        /// The missed windows that will be sent, oldest first.
        public var sent: [Int64]
        /// How many missed windows before ``sent`` will not be sent (counted up to ``countedBeyond``).
        public var notSent: Int
        /// The oldest of those, and the newest.
        public var notSentRange: ClosedRange<Int64>?

        public init(schedule: String, sent: [Int64], notSent: Int, notSentRange: ClosedRange<Int64>?) {
            self.schedule = schedule
            self.sent = sent
            self.notSent = notSent
            self.notSentRange = notSentRange
        }
    }

    /// The most missed windows beyond a schedule's limit ``catchUp(schedules:now:)`` counts one by one.
    public static let countedBeyond = 10_000

    /// The catch-up of every schedule that missed more than its current window at `now` (for the leader to say
    /// what it catches up and what it leaves to a backfill). Only `catch_up: all` and `catch_up: N` schedules with
    /// a history catch up.
    public func catchUp(schedules: [Schedule], now: Int64) -> [CatchUp] {
        schedules.compactMap { schedule in
            guard case .all(let limit) = schedule.catchUp, let base = self.latestWindow(schedule: schedule.name) else {
                return nil
            }
            let due = schedule.timing.windows(
                after: base,
                through: now,
                limit: limit + Self.countedBeyond,
                in: schedule.calendar
            )
            guard due.count > 1 else { return nil }
            let sent = Array(due.suffix(limit))
            let older = due.dropLast(sent.count)
            return CatchUp(
                schedule: schedule.name,
                sent: sent,
                notSent: older.count,
                notSentRange: older.first.flatMap { first in older.last.map { first...$0 } }
            )
        }
    }

    /// Forgets the oldest settled windows beyond ``remembered``.
    private mutating func forget(_ schedule: String) {
        guard let windows = self.windows[schedule] else { return }
        let settled = windows.filter(\.value.isSettled).keys.sorted()
        guard settled.count > Self.remembered else { return }
        let cut = settled[settled.count - Self.remembered]
        self.windows[schedule] = windows.filter { $0.key >= cut || !$0.value.isSettled }
        self.horizon[schedule] = cut
    }
}
