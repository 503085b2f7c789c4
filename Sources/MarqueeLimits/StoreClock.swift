/// The store's clock read on this host's monotonic clock.
///
/// Every worker turns the store's times (slot starts, `Retry-After` blocks, probe times, all microseconds on the
/// store's clock) into instants of its own ``ContinuousClock``. Taking the store's "now" as the moment its answer
/// arrived would shift each answer's times by however late it was read (a slow network, a starved thread), by a
/// different amount in each worker, so slots of several workers that the store spaced evenly would land closer
/// together than the limit allows. Instead, each answer gives an estimate of the offset with its uncertainty (half
/// the round trip, taking the store's "now" at the round trip's middle), and the most certain estimate is kept, as
/// NTP's clock filter does. An estimate's uncertainty grows with its age, so a newer one replaces it in time, and the
/// offset follows the clocks' drift.
struct StoreClock: Sendable {
    /// How fast an estimate grows uncertain: 100 µs a second, far above the drift of two hosts' clocks.
    static let agingPerSecond = 1e-4

    private struct Estimate {
        /// The local instant at which the store's clock read `storeTime`.
        var local: ContinuousClock.Instant
        var storeTime: Int64
        var uncertainty: Duration
    }

    private var best: Estimate?

    /// Takes in one answer: the store said `storeNow` between `sent` and `received` (this host's instants).
    mutating func observe(storeNow: Int64, sent: ContinuousClock.Instant, received: ContinuousClock.Instant) {
        let halfTrip = (received - sent) / 2
        let candidate = Estimate(local: sent + halfTrip, storeTime: storeNow, uncertainty: halfTrip)
        guard let best = self.best else {
            self.best = candidate
            return
        }
        let age = (received - best.local).components
        let seconds = Double(age.seconds) + Double(age.attoseconds) * 1e-18
        if candidate.uncertainty <= best.uncertainty + .seconds(seconds * Self.agingPerSecond) {
            self.best = candidate
        }
    }

    /// The local instant at which the store's clock reads `storeTime`; `nil` before the first answer.
    func local(_ storeTime: Int64) -> ContinuousClock.Instant? {
        self.best.map { $0.local + .microseconds(storeTime - $0.storeTime) }
    }
}
