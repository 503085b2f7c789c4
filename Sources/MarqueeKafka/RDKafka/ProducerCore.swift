internal import Crdkafka
import Logging
import MarqueeCore
import Synchronization

/// The librdkafka side of a ``KafkaProducer``: its handle, its report queue, the delivery-report passes and the
/// close sequence, around one ``ProducerStateMachine`` in one `Mutex`.
///
/// Every method takes the lock, lets the state machine say what to do, releases the lock and does it: no
/// librdkafka call is made while the lock is held (LockAuditTests checks it). Delivery reports are served by
/// passes on ``BlockingExecutor``, started by librdkafka's queue-event callback when its report queue becomes
/// non-empty; the close sequence (flush, then purge what is left) runs there too. No thread belongs to a producer.
///
/// The queue-event callback gets an unretained pointer to this object; the close sequence turns the callback off
/// before it ends, and every pass and the close sequence hold this object strongly, so it outlives them all.
final class ProducerCore: Sendable {
    let client: RDKafkaClient
    let state = Mutex(ProducerStateMachine())
    /// Fires when the close sequence is done: every message has its delivery report.
    let closed = OneShotSignal()
    private let flushTimeout: Duration
    private let queueLimit: Int
    /// The handle's main queue (delivery reports, errors, statistics); destroyed with this object.
    private let reports: SendableOpaquePointer
    /// Cached `rd_kafka_topic_t *` per topic name (produce by handle avoids a lookup per message).
    private let topics = Mutex<[String: SendableOpaquePointer]>([:])

    init(client: RDKafkaClient, flushTimeout: Duration, queueLimit: Int) {
        self.client = client
        self.flushTimeout = flushTimeout
        self.queueLimit = queueLimit
        guard let reports = rd_kafka_queue_get_main(client.handle) else {
            fatalError("rd_kafka_queue_get_main returned NULL")
        }
        self.reports = SendableOpaquePointer(reports)
        // Called on a librdkafka thread (holding the queue's own lock) when a report lands in the empty queue.
        rd_kafka_queue_cb_event_enable(
            reports,
            { _, opaque in
                guard let opaque else { return }
                Unmanaged<ProducerCore>.fromOpaque(opaque).takeUnretainedValue().reportsArrived()
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
        // The callback only says when the queue *becomes* non-empty: what librdkafka queued before it was on (a
        // broker refusing the connection at once, say) would otherwise wait for ever, and hold back the reports
        // queued behind it. One pass serves it.
        self.reportsArrived()
    }

    deinit {
        rd_kafka_queue_cb_event_enable(self.reports.pointer, nil, nil)
        rd_kafka_queue_destroy(self.reports.pointer)
        for topic in self.topics.withLock({ $0.values }) { rd_kafka_topic_destroy(topic.pointer) }
    }

    /// The topic handle of `name`, created on first use.
    func topicHandle(_ name: String) -> OpaquePointer {
        if let handle = self.topics.withLock({ $0[name] }) { return handle.pointer }
        guard let created = rd_kafka_topic_new(self.client.handle, name, nil) else {
            fatalError("rd_kafka_topic_new(\(name)) returned NULL")
        }
        let handle = self.topics.withLock { topics in
            if let existing = topics[name] { return existing }
            topics[name] = SendableOpaquePointer(created)
            return SendableOpaquePointer(created)
        }
        // Another sender created it first: keep theirs.
        if handle.pointer != created { rd_kafka_topic_destroy(created) }
        return handle.pointer
    }

    // MARK: - Delivery reports

    private func reportsArrived() {
        if self.state.withLock({ $0.queueBecameReadable() }) { self.schedulePass() }
    }

    /// Serves the delivery reports on the blocking pool until none is left, then resumes the senders waiting
    /// for room if there is room.
    func schedulePass() {
        BlockingExecutor.start {
            var runAgain = true
            while runAgain {
                // Timeout 0: serves what is queued (delivery-report callbacks, errors, statistics) and returns.
                rd_kafka_poll(self.client.handle, 0)
                let hasRoom = Int(rd_kafka_outq_len(self.client.handle)) < self.queueLimit
                let (resume, again) = self.state.withLock { $0.passFinished(hasRoom: hasRoom) }
                for continuation in resume { continuation.resume() }
                runAgain = again
            }
        }
    }

    // MARK: - Closing

    /// Stops taking messages and, once no sender is enqueueing any more, flushes on the blocking pool.
    /// ``closed`` fires when every message has its report.
    func beginClose() {
        let (resume, startFlush) = self.state.withLock { $0.close() }
        for continuation in resume { continuation.resume() }
        if startFlush { self.startFlush() }
    }

    /// Called by the sender whose end of enqueueing the state machine answered with "flush now".
    func startFlush() {
        BlockingExecutor.start {
            // Serves the remaining delivery reports; whatever is still queued after the timeout is purged, and its
            // reports (failures) are served too, so no send waits forever.
            let flushed = RDKafkaCode(rd_kafka_flush(self.client.handle, Int32(self.flushTimeout.milliseconds)))
            if flushed != .noError {
                self.client.context.logger.warning(
                    "producer closed with \(rd_kafka_outq_len(self.client.handle)) unacknowledged messages\(self.client.context.lastErrorSuffix)"
                )
                rd_kafka_purge(self.client.handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
                rd_kafka_poll(self.client.handle, 0)
            }
            // Takes the queue's lock: once it returns, no queue-event callback runs any more.
            rd_kafka_queue_cb_event_enable(self.reports.pointer, nil, nil)
            for continuation in self.state.withLock({ $0.flushFinished() }) { continuation.resume() }
            self.closed.fire()
        }
    }
}

/// An `OpaquePointer` to a librdkafka object that is safe to use from any thread (topic handles, queues).
struct SendableOpaquePointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
