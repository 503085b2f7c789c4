// The producer's whole mutable state, and nothing that calls librdkafka: this file must not import Crdkafka
// (LockAuditTests checks it), so whatever runs under the producer's lock cannot call into librdkafka.

/// The state of a ``KafkaProducer``, kept in one `Mutex`: whether it takes messages, the senders enqueueing now,
/// the senders waiting for room in librdkafka's queue, and the delivery-report passes.
///
/// Its mutating methods change the state and return what to do next; ``KafkaProducer`` does it after releasing
/// the lock (docs/concurrency.md, "Kafka clients").
///
/// Delivery reports are served in *passes* (`rd_kafka_poll` with a timeout of 0) on the blocking pool. librdkafka
/// says when its report queue becomes non-empty (the queue-event callback); the first such event schedules a
/// pass, and events that come while one is scheduled or running make it run once more, so every report is
/// served and at most one pass runs at a time.
struct ProducerStateMachine {
    private enum Lifecycle {
        case open
        /// Closing: no new sender is admitted; the flush starts when the last active one is done.
        case closing
        case flushing
        case closed
    }

    private enum Passes {
        case idle
        /// A pass is queued or running.
        case scheduled
        /// …and the queue became readable again meanwhile: run once more.
        case scheduledAgain
    }

    private var lifecycle = Lifecycle.open
    private var passes = Passes.idle
    /// Senders between admission and the end of their run of enqueues.
    private var activeEnqueues = 0
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []

    var isOpen: Bool { self.lifecycle == .open }
    var isClosed: Bool { self.lifecycle == .closed }

    // MARK: - Sending

    /// Admits a sender to enqueue a run of messages (it calls ``endEnqueue()`` afterwards); `false` once closing.
    mutating func beginEnqueue() -> Bool {
        guard self.lifecycle == .open else { return false }
        self.activeEnqueues += 1
        return true
    }

    /// A sender's run of enqueues is done; returns whether the flush should start now (the producer is closing
    /// and this was the last active sender).
    mutating func endEnqueue() -> Bool {
        precondition(self.activeEnqueues > 0, "endEnqueue() without beginEnqueue()")
        self.activeEnqueues -= 1
        return self.startFlushIfReady()
    }

    enum WaitForRoomAction {
        /// Closing already: go on (the next admission fails).
        case resume
        /// Waiting; schedule a pass (it resumes the waiter when there is room) if `schedulePass`.
        case wait(schedulePass: Bool)
    }

    /// A sender found librdkafka's queue full and waits for room.
    mutating func waitForRoom(_ continuation: CheckedContinuation<Void, Never>) -> WaitForRoomAction {
        guard self.lifecycle == .open else { return .resume }
        self.roomWaiters.append(continuation)
        // A pass checks the room: without one, a waiter that came after the last report would wait forever.
        return .wait(schedulePass: self.queueBecameReadable())
    }

    // MARK: - Delivery-report passes

    /// librdkafka's report queue became non-empty (or a waiter needs a check); returns whether to schedule a pass.
    mutating func queueBecameReadable() -> Bool {
        switch self.passes {
        case .idle:
            guard self.lifecycle != .closed else { return false }
            self.passes = .scheduled
            return true
        case .scheduled, .scheduledAgain:
            self.passes = .scheduledAgain
            return false
        }
    }

    /// A pass is done.
    ///
    /// - Parameter hasRoom: Whether librdkafka's queue has room for more messages.
    /// - Returns: The waiters to resume, and whether to run another pass.
    mutating func passFinished(hasRoom: Bool) -> (resume: [CheckedContinuation<Void, Never>], runAgain: Bool) {
        var resume: [CheckedContinuation<Void, Never>] = []
        if hasRoom, !self.roomWaiters.isEmpty { swap(&resume, &self.roomWaiters) }
        switch self.passes {
        case .scheduledAgain:
            self.passes = .scheduled
            return (resume, true)
        case .scheduled, .idle:
            self.passes = .idle
            return (resume, false)
        }
    }

    // MARK: - Closing

    /// Stops admitting senders. Returns the waiters to resume (they find the producer closing), and whether the
    /// flush should start now (no sender is active; otherwise the last one starts it).
    mutating func close() -> (resume: [CheckedContinuation<Void, Never>], startFlush: Bool) {
        guard self.lifecycle == .open else { return ([], false) }
        self.lifecycle = .closing
        var resume: [CheckedContinuation<Void, Never>] = []
        swap(&resume, &self.roomWaiters)
        return (resume, self.startFlushIfReady())
    }

    private mutating func startFlushIfReady() -> Bool {
        guard self.lifecycle == .closing, self.activeEnqueues == 0 else { return false }
        self.lifecycle = .flushing
        return true
    }

    /// The flush (and purge) is done: every message has its report.
    mutating func flushFinished() -> [CheckedContinuation<Void, Never>] {
        self.lifecycle = .closed
        var resume: [CheckedContinuation<Void, Never>] = []
        swap(&resume, &self.roomWaiters)
        return resume
    }
}
