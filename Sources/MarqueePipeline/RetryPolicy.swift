/// Where a transiently failed job goes next, and when it may run (docs/design.md, "Retry tiers").
public struct RetryPolicy: Hashable, Sendable {
    /// The delay of each tier, in order. Default: 10 s, 1 min, 10 min.
    public var delays: [Duration]
    /// Each delay is stretched or shrunk by up to this fraction, so retries of a burst spread out.
    /// Default: 0.1.
    public var jitter: Double

    public init(delays: [Duration] = [.seconds(10), .seconds(60), .seconds(600)], jitter: Double = 0.1) {
        self.delays = delays
        self.jitter = jitter
    }

    /// The decision for one failure.
    public enum Decision: Hashable, Sendable {
        /// Retry tier `tier` (1-based), not before `notBefore` (epoch ms).
        case retry(tier: Int, notBefore: Int64)
        case deadLetter
    }

    /// Decides for a job read from `currentTier` (0 for the main topic) that failed transiently.
    ///
    /// The next tier is the one after the current; a minimum wait moves it on to the first tier whose delay
    /// covers the wait (or the last tier, which then waits the whole minimum). After the last tier: dead letter.
    ///
    /// - Parameters:
    ///   - random: A number in 0..<1 for the jitter (injected for tests).
    public func decide(
        currentTier: Int,
        minimumWait: Duration?,
        nowMilliseconds: Int64,
        random: Double = Double.random(in: 0..<1)
    ) -> Decision {
        guard currentTier < self.delays.count else { return .deadLetter }
        var tier = currentTier + 1
        if let minimumWait {
            while tier < self.delays.count && self.delays[tier - 1] < minimumWait { tier += 1 }
        }
        let base = self.delays[tier - 1]
        let factor = 1 + self.jitter * (2 * random - 1)
        var delay = Self.milliseconds(base) * factor
        if let minimumWait { delay = max(delay, Self.milliseconds(minimumWait)) }
        return .retry(tier: tier, notBefore: nowMilliseconds + Int64(delay.rounded(.up)))
    }

    /// Where a held job (``StageError/held(_:wait:)``) waits: the first tier whose delay covers `wait` (or the
    /// last), not before `wait` has passed and never longer than that tier's delay, so the tier's partitions are
    /// not held up behind it; a longer wait is several hops. `nil` without retry tiers.
    public func hold(wait: Duration, nowMilliseconds: Int64) -> (tier: Int, notBefore: Int64)? {
        guard !self.delays.isEmpty else { return nil }
        let tier = (self.delays.firstIndex { $0 >= wait } ?? self.delays.count - 1) + 1
        let delay = min(Self.milliseconds(wait), Self.milliseconds(self.delays[tier - 1]))
        return (tier, nowMilliseconds + Int64(max(0, delay).rounded(.up)))
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
