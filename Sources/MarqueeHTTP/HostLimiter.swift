import DequeModule
import Synchronization

/// Per-bucket token-bucket rate limits, concurrency limits and `Retry-After` blocks, with asynchronous FIFO waits.
///
/// A waiting fetch is a continuation in its bucket's queue, never a blocked thread or a sleeping task. Waits that
/// end at a time (a token refills, a block expires) are fired by the fetcher's curl loop thread, which asks
/// ``fireDue(now:)`` on every iteration and sleeps in `curl_multi_poll` no longer than ``fireDue(now:)``'s
/// answer; ``onEarlierDeadline`` wakes it when a new wait ends sooner than it planned. Waits that end with a
/// release are granted by ``release(key:)``. Cancellation and ``close()`` end waits at once.
final class HostLimiter: Sendable {
    typealias Continuation = CheckedContinuation<Result<Void, HTTPFetchError>, Never>

    private struct Waiter {
        var id: UInt64
        var continuation: Continuation
        var url: String
    }

    private struct Bucket {
        var limit: HostLimit?
        var tokens: Double
        var refilledAt: ContinuousClock.Instant
        var inFlight = 0
        var blockedUntil: ContinuousClock.Instant?
        var waiters: Deque<Waiter> = []
        /// When the head waiter becomes eligible by time; `nil` if none waits or it waits for a release.
        var deadline: ContinuousClock.Instant?

        init(limit: HostLimit?, now: ContinuousClock.Instant) {
            self.limit = limit
            self.tokens = Double(limit?.burst ?? 1)
            self.refilledAt = now
        }

        var isIdle: Bool {
            self.waiters.isEmpty && self.inFlight == 0 && self.blockedUntil == nil
                && (self.limit == nil || self.tokens >= Double(self.limit!.burst))
        }

        mutating func refill(now: ContinuousClock.Instant) {
            guard let limit, limit.requestsPerSecond.isFinite, now > self.refilledAt else { return }
            let elapsed = (now - self.refilledAt).seconds
            self.tokens = min(Double(limit.burst), self.tokens + elapsed * limit.requestsPerSecond)
            self.refilledAt = now
        }

        /// Grants waiters from the head while they are eligible; sets ``deadline`` for the first one that is not.
        mutating func pump(now: ContinuousClock.Instant, into granted: inout [Waiter]) {
            // A timed wait that fires late (the loop's millisecond poll timeout, a busy machine) is granted as of
            // its deadline: refilling at `now` would drop the time past the deadline at the bucket's cap (with
            // burst 1, every time), and the achieved rate would fall short of the limit by the mean lateness (4–5 %
            // at 50 req/s, measured by make bench-fetch). At most a quarter of a token's interval is made up, so
            // a one-second window sees at most rate + 1.25 grants (rate + 1 for whole rates), arrival jitter aside.
            var refillAt = now
            if let due = self.deadline, due < now, let limit, limit.requestsPerSecond.isFinite {
                refillAt = max(due, now - .seconds(0.25 / limit.requestsPerSecond))
            }
            self.deadline = nil
            while let head = self.waiters.first {
                if let until = self.blockedUntil {
                    if now < until {
                        self.deadline = until
                        return
                    }
                    self.blockedUntil = nil
                }
                if let limit {
                    if self.inFlight >= limit.maxConcurrent { return }  // a release pumps again
                    if limit.requestsPerSecond.isFinite {
                        self.refill(now: refillAt)
                        refillAt = now
                        if self.tokens < 1 - 1e-9 {
                            self.deadline = now + .seconds((1 - self.tokens) / limit.requestsPerSecond)
                            return
                        }
                        self.tokens -= 1
                    }
                    self.inFlight += 1
                }
                self.waiters.removeFirst()
                granted.append(head)
            }
        }
    }

    private struct State {
        var buckets: [String: Bucket] = [:]
        var nextID: UInt64 = 0
        var earliestDeadline: ContinuousClock.Instant?
        var isClosed = false

        /// Records a bucket's new deadline; returns whether it is earlier than every planned wake-up.
        mutating func note(_ deadline: ContinuousClock.Instant?) -> Bool {
            guard let deadline else { return false }
            if let earliest = self.earliestDeadline, earliest <= deadline { return false }
            self.earliestDeadline = deadline
            return true
        }
    }

    private let state = Mutex(State())
    /// Called (outside the lock) when a wait ends earlier than the timer loop planned to wake up.
    private let onEarlierDeadline: @Sendable () -> Void

    init(onEarlierDeadline: @escaping @Sendable () -> Void) {
        self.onEarlierDeadline = onEarlierDeadline
    }

    /// Waits until a request of bucket `key` may start, FIFO within the bucket.
    ///
    /// When `limit` is not `nil`, a successful return takes a concurrency place that ``release(key:)`` must give
    /// back. A bucket without a limit still waits out a `Retry-After` block.
    ///
    /// - Throws: An ``HTTPFetchError`` with code ``HTTPFetchError/Code/cancelled`` if the task is cancelled while
    ///   waiting, or ``HTTPFetchError/Code/shutdown`` if the limiter is closed.
    func acquire(key: String, limit: HostLimit?, url: String) async throws(HTTPFetchError) {
        let cancellation = CancellationFlag()
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let (granted, wake, failure) = self.state.withLock {
                    state -> ([Waiter], Bool, HTTPFetchError?) in
                    if cancellation.isSet { return ([], false, .cancelled(url: url)) }
                    if state.isClosed { return ([], false, .shutdown(url: url)) }
                    let now = ContinuousClock.now
                    // Taken out while it changes, so its waiter queue is not shared with the dictionary's copy and
                    // is appended to in place rather than copied whole (up to a stage's worth of waiters) each time.
                    var bucket = state.buckets.removeValue(forKey: key) ?? Bucket(limit: limit, now: now)
                    bucket.waiters.append(Waiter(id: id, continuation: continuation, url: url))
                    var granted: [Waiter] = []
                    bucket.pump(now: now, into: &granted)
                    let wake = state.note(bucket.deadline)
                    state.buckets[key] = bucket
                    return (granted, wake, nil)
                }
                if let failure { continuation.resume(returning: .failure(failure)) }
                if wake { self.onEarlierDeadline() }
                for waiter in granted { waiter.continuation.resume(returning: .success(())) }
            }
        } onCancel: {
            cancellation.set()
            let (removed, granted) = self.state.withLock { state -> (Waiter?, [Waiter]) in
                guard var bucket = state.buckets[key],
                    let index = bucket.waiters.firstIndex(where: { $0.id == id })
                else { return (nil, []) }
                let waiter = bucket.waiters.remove(at: index)
                var granted: [Waiter] = []
                if index == 0 {
                    // The new head may already be due (its deadline not fired yet).
                    bucket.pump(now: .now, into: &granted)
                    _ = state.note(bucket.deadline)
                }
                state.buckets[key] = bucket
                return (waiter, granted)
            }
            removed?.continuation.resume(returning: .failure(.cancelled(url: removed?.url)))
            for waiter in granted { waiter.continuation.resume(returning: .success(())) }
        }
        try result.get()
    }

    /// Gives back the concurrency place of a request that ``acquire(key:limit:url:)`` admitted with a limit.
    func release(key: String) {
        let (granted, wake) = self.state.withLock { state -> ([Waiter], Bool) in
            // Taken out while it changes (as in `acquire`): the head waiters leave the queue in place.
            guard var bucket = state.buckets.removeValue(forKey: key) else { return ([], false) }
            precondition(bucket.inFlight > 0, "HostLimiter.release(\(key)) without a matching acquire")
            bucket.inFlight -= 1
            var granted: [Waiter] = []
            let now = ContinuousClock.now
            bucket.pump(now: now, into: &granted)
            let wake = state.note(bucket.deadline)
            if !(bucket.isIdle && bucket.limit == nil) {
                state.buckets[key] = bucket
            }
            return (granted, wake)
        }
        if wake { self.onEarlierDeadline() }
        for waiter in granted { waiter.continuation.resume(returning: .success(())) }
    }

    /// Blocks bucket `key` until `until` (a `Retry-After`); requests already admitted are not affected.
    func block(key: String, until: ContinuousClock.Instant, limit: HostLimit?) {
        let wake = self.state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            let now = ContinuousClock.now
            var bucket = state.buckets[key] ?? Bucket(limit: limit, now: now)
            if let current = bucket.blockedUntil, current >= until { return false }
            bucket.blockedUntil = until
            if !bucket.waiters.isEmpty { bucket.deadline = until }
            state.buckets[key] = bucket
            // Wake the loop so it can drop the block (and free the bucket) when it expires.
            return state.note(until)
        }
        if wake { self.onEarlierDeadline() }
    }

    /// Grants the waiters whose time has come; returns when the next timed wait ends (`nil`: none).
    ///
    /// Called by the curl loop thread on every iteration; cheap when nothing is due.
    func fireDue(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let (granted, next) = self.state.withLock { state -> ([Waiter], ContinuousClock.Instant?) in
            guard let earliest = state.earliestDeadline, earliest <= now else { return ([], state.earliestDeadline) }
            var granted: [Waiter] = []
            var next: ContinuousClock.Instant?
            var idle: [String] = []
            for key in state.buckets.keys {
                var bucket = state.buckets[key]!
                if bucket.waiters.isEmpty {
                    if let until = bucket.blockedUntil, until <= now { bucket.blockedUntil = nil }
                    bucket.refill(now: now)
                }
                if let deadline = bucket.deadline, deadline <= now { bucket.pump(now: now, into: &granted) }
                if let until = bucket.blockedUntil { next = min(next ?? until, until) }
                if let deadline = bucket.deadline { next = min(next ?? deadline, deadline) }
                if bucket.isIdle && (bucket.limit == nil || state.buckets.count > 4096) {
                    idle.append(key)
                } else {
                    state.buckets[key] = bucket
                }
            }
            for key in idle { state.buckets[key] = nil }
            state.earliestDeadline = next
            return (granted, next)
        }
        for waiter in granted { waiter.continuation.resume(returning: .success(())) }
        return next
    }

    /// Fails every waiter with ``HTTPFetchError/Code/shutdown``; later acquisitions fail the same way.
    func close() {
        let waiters = self.state.withLock { state -> [Waiter] in
            state.isClosed = true
            let waiters = state.buckets.values.flatMap(\.waiters)
            state.buckets = [:]
            state.earliestDeadline = nil
            return waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .failure(.shutdown(url: waiter.url))) }
    }
}

/// A flag set once, from any thread.
final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { self.value.load(ordering: .acquiring) }

    func set() { self.value.store(true, ordering: .releasing) }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = self.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole milliseconds, rounded up, at least 0.
    var roundedUpMilliseconds: Int {
        let (seconds, attoseconds) = self.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow || ms > Int64(Int32.max) { return Int(Int32.max) }
        return Int(ms) + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
