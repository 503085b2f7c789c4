internal import Crdkafka
public import Logging
public import ServiceLifecycle
import MarqueeCore
import Synchronization

/// Produces messages and reports when the broker acknowledged them.
///
/// `send` returns only once the broker has acknowledged the message (with the defaults: stored by every in-sync
/// replica, by the idempotent producer), or throws. A dedicated thread serves librdkafka's delivery reports.
///
/// As a `Service`, the producer runs until graceful shutdown and then flushes and closes.
public final class KafkaProducer: Service, Sendable {
    private let client: RDKafkaClient
    private let logger: Logger
    private let state: ProducerState
    private let pollDone: OneShotSignal
    /// Cached `rd_kafka_topic_t *` per topic name (produce by handle avoids a lookup per message).
    private let topics = Mutex<[String: SendableOpaquePointer]>([:])

    /// Creates a producer and starts its delivery-report thread.
    ///
    /// - Throws: A ``KafkaError`` when the configuration is invalid.
    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        try configuration.kafka.validate()
        self.logger = logger
        let context = RDKafkaClientContext(logger: logger)
        self.client = try RDKafkaClient(kind: .producer, properties: configuration.properties, context: context) {
            conf in
            rd_kafka_conf_set_dr_msg_cb(conf) { _, message, _ in
                guard let message, let slot = message.pointee._private else { return }
                DeliveryBatch.deliver(
                    slot: slot,
                    code: message.pointee.err,
                    partition: message.pointee.partition,
                    offset: message.pointee.offset
                )
            }
        }
        let state = ProducerState()
        self.state = state
        let client = self.client
        let flushTimeout = configuration.flushTimeout
        let queueLimit = configuration.queueMessages
        self.pollDone = DedicatedThread.start(name: "marquee-kafka-producer") {
            Self.pollLoop(client: client, state: state, queueLimit: queueLimit, flushTimeout: flushTimeout)
        }
    }

    deinit {
        if !self.pollDone.isFired {
            // The delivery-report thread keeps the client alive until it has flushed.
            self.logger.warning("KafkaProducer released without close(): flushing now")
            self.state.mutex.withLock { $0.isClosing = true }
            rd_kafka_yield(self.client.handle)
        }
        for topic in self.topics.withLock({ $0.values }) { rd_kafka_topic_destroy(topic.pointer) }
    }

    /// The latest statistics JSON librdkafka emitted (see ``KafkaConfiguration/statisticsInterval``).
    public var statistics: String? { self.client.context.statistics.withLock { $0 } }

    /// librdkafka's statistics JSON each time it is emitted, for a metrics exporter (one reader; when it falls
    /// behind, only the newest is kept). Ends when the producer is released.
    public var statisticsUpdates: AsyncStream<String> { self.client.context.statisticsUpdates }

    /// Sends one message and waits for the broker's acknowledgement.
    ///
    /// - Returns: Where the broker stored the message.
    /// - Throws: A ``KafkaError`` with code ``KafkaError/Code-swift.struct/delivery`` when the broker did not
    ///   acknowledge it within ``KafkaProducerConfiguration/deliveryTimeout``, or ``KafkaError/Code-swift.struct/closed``.
    @discardableResult
    public func send(_ message: KafkaProducerMessage) async throws(KafkaError) -> KafkaDeliveryReport {
        try await self.send([message])[0]
    }

    /// Sends messages and waits until the broker acknowledged every one of them.
    ///
    /// Messages are enqueued in order; when the local queue is full the call waits for room.
    ///
    /// - Returns: One delivery report per message, in order.
    /// - Throws: A ``KafkaError`` for the first message that failed; the others may have been stored (at least
    ///   once: sending the batch again is safe for idempotent consumers).
    @discardableResult
    public func send(_ messages: [KafkaProducerMessage]) async throws(KafkaError) -> [KafkaDeliveryReport] {
        var reports: [KafkaDeliveryReport] = []
        reports.reserveCapacity(messages.count)
        for result in try await self.sendCollectingResults(messages) { reports.append(try result.get()) }
        return reports
    }

    /// Sends messages and returns once the broker acknowledged every one of them, without building delivery
    /// reports: what a stage needs before it commits its input.
    ///
    /// - Throws: A ``KafkaError`` for the first message that failed.
    public func deliver(_ messages: [KafkaProducerMessage]) async throws(KafkaError) {
        let batch = try await self.enqueueAll(messages)
        if let error = batch.firstError(topics: { messages[$0].topic }, lastError: { self.client.context.lastErrorSuffix }) {
            throw error
        }
    }

    /// Sends messages and reports each one's outcome separately.
    public func sendCollectingResults(
        _ messages: [KafkaProducerMessage]
    ) async throws(KafkaError) -> [Result<KafkaDeliveryReport, KafkaError>] {
        let batch = try await self.enqueueAll(messages)
        return batch.results(topics: { messages[$0].topic }, lastError: { self.client.context.lastErrorSuffix })
    }

    /// Enqueues every message and waits for all their delivery reports.
    private func enqueueAll(_ messages: [KafkaProducerMessage]) async throws(KafkaError) -> DeliveryBatch {
        if self.state.mutex.withLock({ $0.isClosing }) { throw .closed("the producer") }
        let batch = DeliveryBatch(count: messages.count)
        var index = 0
        // Batches usually go to one topic: look its handle up once per run of equal topics.
        var topic: (name: String, handle: OpaquePointer)?
        enqueueing: while index < messages.count {
            if Task.isCancelled {
                batch.fail(from: index, with: KafkaError(code: .cancelled, reason: "the sending task was cancelled"))
                break
            }
            // Enqueue a run of messages as one of the producer's active enqueues, counted under the lock: the poll
            // thread waits for none to be active before its final flush. The messages themselves are enqueued
            // outside the lock; held for the whole run, it kept concurrent senders waiting in the kernel
            // (make bench-fetch).
            let admitted = self.state.mutex.withLock { state in
                guard state.acceptsMessages else { return false }
                self.state.activeEnqueues.add(1, ordering: .relaxed)
                return true
            }
            let stop: RDKafkaCode? = admitted ? self.enqueueRun(messages, from: &index, topic: &topic, batch: batch) : nil
            switch stop {
            case nil:
                batch.fail(from: index, with: .closed("the producer"))
                break enqueueing
            case .queueFull?:
                await self.waitForQueueSpace()
            default:
                continue
            }
        }
        await batch.waitForAll()
        return batch
    }

    /// Enqueues up to 256 messages from `index` (advanced past those enqueued or failed); `.queueFull` when
    /// librdkafka's queue is full. Ends the active enqueue ``enqueueAll(_:)`` counted.
    private func enqueueRun(
        _ messages: [KafkaProducerMessage],
        from index: inout Int,
        topic: inout (name: String, handle: OpaquePointer)?,
        batch: DeliveryBatch
    ) -> RDKafkaCode {
        defer { self.state.activeEnqueues.subtract(1, ordering: .releasing) }
        let end = min(index + 256, messages.count)
        // Read through the buffer: each message is borrowed, not copied (a copy retains its topic, key,
        // value and headers, and releases them again: a measurable share of a produce loop).
        return messages.withUnsafeBufferPointer { messages -> RDKafkaCode in
            while index < end {
                if topic?.name != messages[index].topic {
                    topic = (messages[index].topic, self.topicHandle(messages[index].topic))
                }
                let code = self.enqueue(messages[index], topic: topic!.handle, slot: batch.slot(index))
                switch code {
                case .noError:
                    break
                case .queueFull:
                    return code
                default:
                    batch.fail(
                        index,
                        with: .rdKafka(.delivery, code, context: "could not enqueue message for '\(messages[index].topic)'")
                    )
                }
                index += 1
            }
            return .noError
        }
    }

    private func enqueue(_ message: KafkaProducerMessage, topic: OpaquePointer, slot: UnsafeMutableRawPointer) -> RDKafkaCode {
        if message.headers.isEmpty {
            // Without headers, librdkafka's plain entry point (the one its own benchmark uses): no tag list to
            // build and walk, no error object to allocate on failure.
            let result = message.value.withUnsafeBytes { value in
                Self.withOptionalBytes(message.key) { key in
                    rd_kafka_produce(
                        topic, message.partition ?? RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                        UnsafeMutableRawPointer(mutating: value.baseAddress), value.count,
                        key?.baseAddress, key?.count ?? 0, slot)
                }
            }
            return result == 0 ? .noError : RDKafkaCode(rd_kafka_last_error())
        }
        let headers = Self.makeHeaders(message.headers)
        let error: OpaquePointer? = message.value.withUnsafeBytes { value in
            Self.withOptionalBytes(message.key) { key in
                withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7) { vus in
                    var count = 0
                    func add(_ type: rd_kafka_vtype_t, _ set: (inout rd_kafka_vu_t) -> Void) {
                        var vu = rd_kafka_vu_t()
                        vu.vtype = type
                        set(&vu)
                        vus.initializeElement(at: count, to: vu)
                        count += 1
                    }
                    add(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic }
                    add(RD_KAFKA_VTYPE_VALUE) {
                        $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                        $0.u.mem.size = value.count
                    }
                    if let key {
                        add(RD_KAFKA_VTYPE_KEY) {
                            $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key.baseAddress)
                            $0.u.mem.size = key.count
                        }
                    }
                    add(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = message.partition ?? RD_KAFKA_PARTITION_UA }
                    // F_COPY: librdkafka copies key and value, so Swift's buffers need not outlive this call.
                    add(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
                    add(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = slot }
                    // The header list is handed over only when the message is accepted.
                    add(RD_KAFKA_VTYPE_HEADERS) { $0.u.headers = headers }
                    defer { vus.baseAddress!.deinitialize(count: count) }
                    return rd_kafka_produceva(self.client.handle, vus.baseAddress, count)
                }
            }
        }
        guard let error else { return .noError }
        // On failure the message (and its header list) stays ours.
        rd_kafka_headers_destroy(headers)
        let code = RDKafkaCode(rd_kafka_error_code(error))
        rd_kafka_error_destroy(error)
        return code
    }

    private static func makeHeaders(_ headers: [KafkaHeader]) -> OpaquePointer {
        guard let list = rd_kafka_headers_new(headers.count) else { fatalError("rd_kafka_headers_new: out of memory") }
        // Each header borrowed in place (a copy of each retained and released its key and value).
        headers.withUnsafeBufferPointer { headers in
            for index in headers.indices {
                headers[index].withKeyAndValueBytes { key, value in
                    // A nil value pointer is a header without a value (not an empty one).
                    _ = rd_kafka_header_add(list, key.baseAddress, key.count, value?.baseAddress, value?.count ?? 0)
                }
            }
        }
        return list
    }

    private static func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBytes { body($0) }
    }

    private func topicHandle(_ name: String) -> OpaquePointer {
        self.topics.withLock { topics in
            if let handle = topics[name] { return handle.pointer }
            guard let handle = rd_kafka_topic_new(self.client.handle, name, nil) else {
                fatalError("rd_kafka_topic_new(\(name)) returned NULL")
            }
            topics[name] = SendableOpaquePointer(handle)
            return handle
        }
    }

    private func waitForQueueSpace() async {
        await withCheckedContinuation { continuation in
            // Once the poll thread stopped taking messages it resumes no more waiters: do not wait then.
            let isOpen = self.state.mutex.withLock { state in
                if state.acceptsMessages { state.queueWaiters.append(continuation) }
                return state.acceptsMessages
            }
            if !isOpen { continuation.resume() }
        }
    }

    /// Flushes outstanding messages (up to ``KafkaProducerConfiguration/flushTimeout``), fails what is left, and
    /// stops the delivery-report thread. Later sends throw ``KafkaError/Code-swift.struct/closed``.
    public func close() async {
        self.state.mutex.withLock { $0.isClosing = true }
        rd_kafka_yield(self.client.handle)
        await self.pollDone.wait()
    }

    /// Runs until graceful shutdown, then closes.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await self.pollDone.wait()
        } onGracefulShutdown: {
            self.state.mutex.withLock { $0.isClosing = true }
            rd_kafka_yield(self.client.handle)
        }
    }

    private static func pollLoop(client: RDKafkaClient, state: ProducerState, queueLimit: Int, flushTimeout: Duration) {
        while true {
            rd_kafka_poll(client.handle, 100)
            let (closing, waiters) = state.mutex.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.isClosing { state.acceptsMessages = false }
                guard !state.queueWaiters.isEmpty,
                    state.isClosing || Int(rd_kafka_outq_len(client.handle)) < queueLimit
                else { return (state.isClosing, []) }
                defer { state.queueWaiters = [] }
                return (state.isClosing, state.queueWaiters)
            }
            for waiter in waiters { waiter.resume() }
            if closing { break }
        }
        // A sender admitted before `acceptsMessages` was cleared may still be enqueueing; none can start now.
        while state.activeEnqueues.load(ordering: .acquiring) > 0 { rd_kafka_poll(client.handle, 1) }
        // Serves the remaining delivery reports; whatever is still queued after the timeout is purged, and its
        // reports (failures) are served too, so no send waits forever.
        let flushed = RDKafkaCode(rd_kafka_flush(client.handle, Int32(flushTimeout.milliseconds)))
        if flushed != .noError {
            client.context.logger.warning(
                "producer closed with \(rd_kafka_outq_len(client.handle)) unacknowledged messages\(client.context.lastErrorSuffix)"
            )
            rd_kafka_purge(client.handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
            rd_kafka_poll(client.handle, 0)
        }
        let waiters = state.mutex.withLock { state in
            defer { state.queueWaiters = [] }
            return state.queueWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The producer's mutable state, shared by senders and the poll thread.
final class ProducerState: Sendable {
    struct State {
        var isClosing = false
        /// Cleared by the poll thread before its final flush: no message may be enqueued after it.
        var acceptsMessages = true
        var queueWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let mutex = Mutex(State())
    /// Senders enqueueing messages (admitted under `mutex` while `acceptsMessages` held).
    let activeEnqueues = Atomic<Int>(0)
}

/// An `OpaquePointer` to a librdkafka object that is safe to use from any thread (topic handles, queues).
struct SendableOpaquePointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
