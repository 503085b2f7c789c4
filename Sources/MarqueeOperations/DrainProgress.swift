/// Decides, sample by sample, whether `marquee drain` is done: drained once the pipeline was idle for `settle`
/// samples in a row; given up once past its deadline.
public struct DrainProgress: Sendable, Hashable {
    /// What to do after a sample.
    public enum Decision: Sendable, Hashable {
        /// Idle for `settle` samples in a row: print the summary.
        case drained
        /// Not drained and past the deadline: give up.
        case timedOut
        /// Sample again after the interval.
        case wait
    }

    /// Samples in a row that must find the pipeline idle.
    public let settle: Int
    /// Idle samples in a row so far.
    public private(set) var idleInARow = 0

    /// Progress that needs `settle` idle samples in a row (at least 1).
    public init(settle: Int) {
        precondition(settle >= 1, "settle must be at least 1, not \(settle)")
        self.settle = settle
    }

    /// Counts a sample and decides.
    ///
    /// - Parameters:
    ///   - isIdle: Whether the sample found nothing left to do (``DrainSample/isIdle``).
    ///   - isPastDeadline: Whether the deadline has passed: it only counts when the pipeline has not drained.
    public mutating func record(isIdle: Bool, isPastDeadline: Bool) -> Decision {
        self.idleInARow = isIdle ? self.idleInARow + 1 : 0
        if self.idleInARow >= self.settle { return .drained }
        return isPastDeadline ? .timedOut : .wait
    }
}
