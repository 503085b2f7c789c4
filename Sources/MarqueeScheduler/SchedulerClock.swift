import MarqueeCore

/// The producer's sense of time: the wall clock (windows are wall-clock instants), injectable so tests can move
/// it without sleeping.
public protocol SchedulerClock: Sendable {
    /// Epoch milliseconds.
    func now() -> Int64

    /// Returns at `instant` (epoch milliseconds) or soon after.
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    func sleep(until instant: Int64) async throws
}

/// The system's real-time clock.
public struct SystemSchedulerClock: SchedulerClock {
    public init() {}

    /// The wall clock, epoch milliseconds.
    public func now() -> Int64 { Int64(JobID.nowMilliseconds()) }

    /// Sleeps on the task clock until the wall clock should read `instant`.
    public func sleep(until instant: Int64) async throws {
        let remaining = instant - self.now()
        if remaining > 0 { try await Task.sleep(for: .milliseconds(remaining)) }
        try Task.checkCancellation()
    }
}
