import Synchronization

/// A daily call budget, such as a KOFIC key's quota (about 3,000 calls a day), reset at midnight in the
/// upstream's time zone.
///
/// The count is this process's: several fetch workers sharing one key should split the limit between them.
/// When the upstream says the quota is spent before the count does (other users of the key), ``spend()`` marks
/// the rest of the day spent.
public final class DailyBudget: Sendable {
    /// Calls allowed per day.
    public let limit: Int
    /// The upstream's offset from UTC (KOFIC: +9 h).
    private let utcOffsetSeconds: Int64
    private let now: @Sendable () -> Int64
    private let state: Mutex<(day: Int64, used: Int)>

    /// - Parameters:
    ///   - now: The clock, in milliseconds since the epoch (injected for tests).
    public init(limit: Int, utcOffset: Duration = .seconds(9 * 3600), now: @escaping @Sendable () -> Int64) {
        self.limit = limit
        self.utcOffsetSeconds = utcOffset.components.seconds
        self.now = now
        self.state = Mutex((day: 0, used: 0))
    }

    private func day(_ milliseconds: Int64) -> Int64 { (milliseconds / 1000 + self.utcOffsetSeconds) / 86_400 }

    /// Takes one call from today's budget. Returns `false` (taking nothing) when it is spent.
    public func take() -> Bool {
        let today = self.day(self.now())
        return self.state.withLock { state in
            if state.day != today { state = (today, 0) }
            guard state.used < self.limit else { return false }
            state.used += 1
            return true
        }
    }

    /// Marks today's budget spent (the upstream said so).
    public func spend() {
        let today = self.day(self.now())
        self.state.withLock { $0 = (today, self.limit) }
    }

    /// Calls left today.
    public var remaining: Int {
        let today = self.day(self.now())
        return self.state.withLock { $0.day == today ? self.limit - $0.used : self.limit }
    }

    /// The time until the budget resets (the next midnight in the upstream's time zone).
    public func untilReset() -> Duration {
        let now = self.now()
        let nextMidnight = (self.day(now) + 1) * 86_400 - self.utcOffsetSeconds
        return .milliseconds(nextMidnight * 1000 - now)
    }
}
