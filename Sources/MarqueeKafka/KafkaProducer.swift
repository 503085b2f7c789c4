internal import Crdkafka
public import Logging
import MarqueeCore
public import ServiceLifecycle
import Synchronization

/// Produces messages and reports when the broker acknowledged them.
///
/// `send` returns only once the broker has acknowledged the message (with the defaults: stored by every in-sync
/// replica, by the idempotent producer), or throws. librdkafka's delivery reports are served on the shared
/// blocking pool as they arrive; no thread belongs to a producer.
///
/// As a `Service`, the producer runs until graceful shutdown and then flushes and closes.
public final class KafkaProducer: Service, Sendable {
    private let core: ProducerCore
    private var client: RDKafkaClient { self.core.client }
    private let logger: Logger

    /// Creates a producer.
    ///
    /// - Throws: A ``KafkaError`` when the configuration is invalid.
    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        try configuration.kafka.validate()
        self.logger = logger
        let context = RDKafkaClientContext(logger: logger)
        let client = try RDKafkaClient(kind: .producer, properties: configuration.properties, context: context) {
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
        self.core = ProducerCore(
            client: client,
            flushTimeout: configuration.flushTimeout,
            queueLimit: configuration.queueMessages
        )
    }

    deinit {
        if !self.core.closed.isFired {
            // The close sequence keeps the core (and its client) alive until it has flushed.
            self.logger.warning("KafkaProducer released without close(): flushing now")
            self.core.beginClose()
        }
    }

    /// The latest statistics JSON librdkafka emitted (see ``KafkaConfiguration/statisticsInterval``).
    public var statistics: String? { self.client.context.statistics.withLock { $0 } }

    /// librdkafka's statistics JSON each time it is emitted, for a metrics exporter (one reader; when it falls
    /// behind, only the newest is kept). Ends when the producer is released.
    public var statisticsUpdates: AsyncStream<String> { self.client.context.statisticsUpdates }

    /// Messages librdkafka holds that have no delivery report yet (queued, in flight, or reported and not yet
    /// served): what a close would have to flush.
    var outstandingMessages: Int { Int(rd_kafka_outq_len(self.client.handle)) }

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
        if let error = batch.firstError(
            topics: { messages[$0].topic },
            lastError: { self.client.context.lastErrorSuffix }
        ) {
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
        if !self.core.state.withLock({ $0.isOpen }) { throw .closed("the producer") }
        let batch = DeliveryBatch(count: messages.count)
        var index = 0
        // Batches usually go to one topic: look its handle up once per run of equal topics.
        var topic: (name: String, handle: OpaquePointer)?
        enqueueing: while index < messages.count {
            if Task.isCancelled {
                batch.fail(from: index, with: KafkaError(code: .cancelled, reason: "the sending task was cancelled"))
                break
            }
            // Enqueue a run of messages as one of the producer's active enqueues, counted by the state machine: the
            // close sequence flushes only when none is active. The messages themselves are enqueued outside the
            // lock, like every librdkafka call.
            let admitted = self.core.state.withLock { $0.beginEnqueue() }
            let stop: RDKafkaCode? =
                admitted ? self.enqueueRun(messages, from: &index, topic: &topic, batch: batch) : nil
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
    /// librdkafka's queue is full. Ends the active enqueue ``enqueueAll(_:)`` counted (and starts the flush when
    /// the producer is closing and it was the last).
    private func enqueueRun(
        _ messages: [KafkaProducerMessage],
        from index: inout Int,
        topic: inout (name: String, handle: OpaquePointer)?,
        batch: DeliveryBatch
    ) -> RDKafkaCode {
        defer { if self.core.state.withLock({ $0.endEnqueue() }) { self.core.startFlush() } }
        let end = min(index + 256, messages.count)
        // Read through the buffer: each message is borrowed, not copied (a copy retains its topic, key,
        // value and headers, and releases them again: a measurable share of a produce loop).
        return messages.withUnsafeBufferPointer { messages -> RDKafkaCode in
            while index < end {
                if topic?.name != messages[index].topic {
                    topic = (messages[index].topic, self.core.topicHandle(messages[index].topic))
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
                        with: .rdKafka(
                            .delivery,
                            code,
                            context: "could not enqueue message for '\(messages[index].topic)'"
                        )
                    )
                }
                index += 1
            }
            return .noError
        }
    }

    private func enqueue(
        _ message: KafkaProducerMessage,
        topic: OpaquePointer,
        slot: UnsafeMutableRawPointer
    ) -> RDKafkaCode {
        if message.headers.isEmpty {
            // Without headers, librdkafka's plain entry point (the one its own benchmark uses): no tag list to
            // build and walk, no error object to allocate on failure.
            let result = message.value.withUnsafeBytes { value in
                Self.withOptionalBytes(message.key) { key in
                    rd_kafka_produce(
                        topic,
                        message.partition ?? RD_KAFKA_PARTITION_UA,
                        RD_KAFKA_MSG_F_COPY,
                        UnsafeMutableRawPointer(mutating: value.baseAddress),
                        value.count,
                        key?.baseAddress,
                        key?.count ?? 0,
                        slot
                    )
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

    private func waitForQueueSpace() async {
        await withCheckedContinuation { continuation in
            switch self.core.state.withLock({ $0.waitForRoom(continuation) }) {
            case .resume:
                continuation.resume()
            case .wait(let schedulePass):
                if schedulePass { self.core.schedulePass() }
            }
        }
    }

    /// Flushes outstanding messages (up to ``KafkaProducerConfiguration/flushTimeout``), fails what is left, and
    /// stops serving delivery reports. Later sends throw ``KafkaError/Code-swift.struct/closed``.
    public func close() async {
        self.core.beginClose()
        await self.core.closed.wait()
    }

    /// Runs until graceful shutdown, then closes.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await self.core.closed.wait()
        } onGracefulShutdown: {
            self.core.beginClose()
        }
    }
}
