internal import Crdkafka
import Logging
import MarqueeCore
import Synchronization

/// The librdkafka side of a ``KafkaConsumer``: its handle and consumer queue, the reads, the rebalance callback
/// and the close sequence, around one ``ConsumerStateMachine`` in one `Mutex`.
///
/// Every method follows one pattern: take the lock, let the state machine change the state and say what to do,
/// release the lock, do it. No librdkafka call is made while the lock is held (LockAuditTests checks it), so the
/// queue-event callback, which librdkafka calls on whichever thread enqueues (also inside a call this type
/// makes), may take the same lock.
///
/// The iterating task reads from librdkafka itself, without blocking: `next()` takes a batch with a timeout of 0
/// and, when the queue is empty, suspends until librdkafka's queue-event callback says something arrived. No
/// thread hop sits between librdkafka and the application, and the consumer reads exactly as fast as the
/// application asks (librdkafka's own prefetch bounds, `queued.min.messages` and `queued.max.messages.kbytes`,
/// bound the memory). Rebalance callbacks run inside those reads, inside the one-message reads of
/// ``serveGroupWhileBusy(interval:maxIdle:)`` while the application asks for nothing, and inside the close
/// sequence; each of these holds the state machine's access, so a rebalance never races another state-coupled
/// call. Blocking calls (the start-up check, the close sequence) run on ``BlockingExecutor``.
@usableFromInline
final class ConsumerCore: Sendable {
    /// What only the holder of access touches while it reads: the batch array, the decoder with its topic-name
    /// cache, and arrays kept from batch to batch.
    ///
    /// `@unchecked Sendable`: used only by the thread that holds ``ConsumerStateMachine``'s access to read (one
    /// at a time; taking and releasing access under the lock orders the uses). That already makes each use
    /// exclusive, so the fields skip the runtime's exclusivity checks (the decoder is used once per message).
    private final class ReadBuffers: @unchecked Sendable {
        let batch: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>
        @exclusivity(unchecked) var decoder = MessageDecoder()
        /// Offsets of the batch's messages, and the index in the batch of each.
        @exclusivity(unchecked) var offsets: [Int64] = []
        @exclusivity(unchecked) var indices: [Int] = []
        /// The runs of the batch: partition and range in `offsets`.
        @exclusivity(unchecked) var runs: [(KafkaTopicPartition, Range<Int>)] = []
        /// Per run: its partition's state, or `nil` when its messages are skipped. Unretained: `keep` holds them.
        @exclusivity(unchecked) var owners: [Unmanaged<ConsumerStateMachine.PartitionState>?] = []
        @exclusivity(unchecked) var keep: [ConsumerStateMachine.PartitionState] = []
        /// The decoded batch, in reverse order; swapped with the state's (empty) buffer.
        @exclusivity(unchecked) var decoded: [KafkaConsumerMessage] = []

        init(capacity: Int) { self.batch = .allocate(capacity: capacity) }
        deinit { self.batch.deallocate() }
    }

    private static let batchCapacity = 1024

    private let state = Mutex(ConsumerStateMachine())
    private let buffers = ReadBuffers(capacity: ConsumerCore.batchCapacity)
    private let batchSize: Int
    private let logger: Logger
    /// The `rd_kafka_t *` and its consumer queue, set once by ``attach(_:)`` before any other use. Not owned:
    /// the ``KafkaConsumer`` owns the client (which owns its context, which refers to this core).
    private nonisolated(unsafe) var rk: OpaquePointer!
    /// Taken strongly by the close sequence, so the handle outlives it even when the consumer is released.
    private nonisolated(unsafe) weak var client: RDKafkaClient?
    private nonisolated(unsafe) var queue: OpaquePointer!
    private nonisolated(unsafe) var probeMetadata: (@Sendable (Duration) throws(KafkaError) -> Void)!
    let closed = OneShotSignal()

    /// Assignments and revocations, for whoever watches (``KafkaConsumer/rebalances``).
    let rebalances: AsyncStream<KafkaRebalanceEvent>
    private let rebalanceContinuation: AsyncStream<KafkaRebalanceEvent>.Continuation

    init(batchSize: Int, logger: Logger) {
        self.batchSize = min(max(batchSize, 1), Self.batchCapacity)
        self.logger = logger
        (self.rebalances, self.rebalanceContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Connects the core to its handle: takes the consumer queue and asks librdkafka to say when it becomes
    /// readable. Call once, after `rd_kafka_poll_set_consumer`, before anything else.
    func attach(_ client: RDKafkaClient) {
        self.rk = client.handle
        self.client = client
        // Weak: the probe must not keep the client (and its librdkafka handle) alive.
        self.probeMetadata = { [weak client] timeout throws(KafkaError) in
            _ = try client?.metadata(localOnly: true, timeout: timeout)
        }
        guard let queue = rd_kafka_queue_get_consumer(client.handle) else {
            preconditionFailure("rd_kafka_queue_get_consumer returned NULL after rd_kafka_poll_set_consumer")
        }
        self.queue = queue
        // Called on a librdkafka thread (holding the queue's own lock) when an element lands in the empty queue;
        // it only wakes the reader.
        rd_kafka_queue_cb_event_enable(
            queue,
            { _, opaque in
                guard let opaque else { return }
                let core = Unmanaged<ConsumerCore>.fromOpaque(opaque).takeUnretainedValue()
                core.state.withLock { $0.wakeReader() }?.resume()
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
    }

    var assignment: [KafkaTopicPartition] { self.state.withLock { $0.assignment } }

    var uncommittedCount: Int { self.state.withLock { $0.uncommittedCount } }

    var pausedPartitions: [KafkaTopicPartition] { self.state.withLock { $0.pausedPartitions } }

    /// Why the consumer stopped, when it failed.
    var failure: KafkaError? { self.state.withLock { $0.failure } }

    /// Checks on the blocking pool that a broker answers; if none does in time, ends the messages with
    /// ``KafkaError/Code-swift.struct/brokerUnreachable``.
    func probe(timeout: Duration) {
        let probeMetadata = self.probeMetadata!
        BlockingExecutor.start {
            do throws(KafkaError) {
                try probeMetadata(timeout)
            } catch {
                self.logger.error("consumer could not reach a broker: \(error.reason)")
                self.state.withLock { state in
                    state.markUnreachable()
                    return state.finish(.failed(error))
                }?.resume()
                self.beginClose()
            }
        }
    }

    // MARK: - Application side

    /// The next buffered message, without suspending: the fast path of ``next()``.
    @usableFromInline
    func nextBuffered() -> KafkaConsumerMessage? {
        self.state.withLock { $0.nextBuffered() }
    }

    /// Ends every iteration of the messages; reading stops, the consumer stays in the group.
    func stopMessages() {
        self.state.withLock { $0.stopMessages() }?.resume()
    }

    @usableFromInline
    func next() async throws(KafkaError) -> KafkaConsumerMessage? {
        while true {
            switch self.state.withLock({ $0.next() }) {
            case .message(let message):
                return message
            case .end(let error):
                if let error { throw error }
                return nil
            case .read(let calls):
                self.make(calls)
                let hasRead = self.readBatch(limit: self.batchSize)
                self.releaseAccess(isIdle: !hasRead)
                if hasRead { continue }
            case .wait:
                break
            }
            // A cancelled reader ends its iteration (nothing is lost: unread messages stay in librdkafka).
            if Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    if self.state.withLock({ $0.suspendReader(continuation) }) { continuation.resume() }
                }
                self.state.withLock { $0.readerResumed() }
            } onCancel: {
                self.state.withLock { $0.wakeReader() }?.resume()
            }
        }
    }

    /// Reads one batch without waiting; the caller holds access. Returns whether anything came (messages or
    /// events); `false` when the queue was empty.
    private func readBatch(limit: Int) -> Bool {
        let buffers = self.buffers
        // Serves rebalance callbacks, errors and statistics on the way (this thread holds access).
        let count = rd_kafka_consume_batch_queue(self.queue, 0, buffers.batch, limit)
        guard count > 0 else { return false }
        let raws = UnsafeMutableBufferPointer(start: buffers.batch, count: count)
        defer { for raw in raws { if let raw { rd_kafka_message_destroy(raw) } } }

        // Errors, offsets and runs of partitions, outside the lock.
        var errors: [(RDKafkaCode, String)] = []
        buffers.offsets.removeAll(keepingCapacity: true)
        buffers.indices.removeAll(keepingCapacity: true)
        buffers.runs.removeAll(keepingCapacity: true)
        var run: (rkt: OpaquePointer?, partition: Int32)?
        for (index, raw) in raws.enumerated() {
            guard let raw else { continue }
            let code = RDKafkaCode(raw.pointee.err)
            guard code == .noError else {
                errors.append((code, rd_kafka_message_errstr(raw).map { String(cString: $0) } ?? code.message))
                continue
            }
            if run == nil || run!.rkt != raw.pointee.rkt || run!.partition != raw.pointee.partition {
                run = (raw.pointee.rkt, raw.pointee.partition)
                let key = KafkaTopicPartition(
                    topic: buffers.decoder.topicName(raw.pointee.rkt),
                    partition: raw.pointee.partition
                )
                buffers.runs.append((key, buffers.offsets.count..<buffers.offsets.count))
            }
            buffers.offsets.append(raw.pointee.offset)
            buffers.indices.append(index)
            buffers.runs[buffers.runs.count - 1].1 =
                buffers.runs[buffers.runs.count - 1].1.lowerBound..<buffers.offsets.count
        }

        if !buffers.runs.isEmpty {
            let runs = buffers.runs.map { ($0.0, buffers.offsets[$0.1]) }
            self.state.withLock { $0.register(runs: runs, owners: &buffers.owners) }
            // Decoded outside the lock, backwards: the buffer is a stack whose last element is handed out first.
            buffers.keep.removeAll(keepingCapacity: true)
            buffers.decoded.reserveCapacity(buffers.offsets.count)
            for (runIndex, (_, range)) in buffers.runs.enumerated().reversed() {
                guard let owner = buffers.owners[runIndex] else { continue }
                buffers.keep.append(owner.takeUnretainedValue())
                for position in range.reversed() {
                    buffers.decoded.append(
                        buffers.decoder.decode(raws[buffers.indices[position]]!, partitionState: owner)
                    )
                }
            }
            self.state.withLock { $0.deliver(&buffers.decoded, partitions: buffers.keep) }
            buffers.keep.removeAll(keepingCapacity: true)
        }

        for (code, text) in errors {
            if code == .fatal {
                let error = KafkaError(code: .consumer, reason: "fatal consumer error: \(text)", rdKafkaCode: code)
                self.state.withLock { $0.finish(.failed(error)) }?.resume()
            } else {
                self.logger.warning(
                    "consumer error: \(text)",
                    metadata: [MarqueeKafkaLoggingKeys.error: "\(code.name)"]
                )
            }
        }
        return true
    }

    /// Gives access back, first making the calls others asked for meanwhile; starts the close sequence when it
    /// waited for access.
    private func releaseAccess(isIdle: Bool = false) {
        while true {
            switch self.state.withLock({ $0.release(isIdle: isIdle) }) {
            case .make(let calls):
                self.make(calls)
            case .released(let resume, let startClose):
                for continuation in resume { continuation.resume() }
                if let startClose { self.startCloseSequence(startClose) }
                return
            }
        }
    }

    /// Makes the calls that follow the state, in order; the caller holds access.
    private func make(_ calls: ConsumerStateMachine.Calls) {
        if !calls.stores.isEmpty {
            let list = RDKafkaTopicPartitionList(calls.stores.map { ($0.0, Optional($0.1)) })
            let code = RDKafkaCode(rd_kafka_offsets_store(self.rk, list.pointer))
            // Stored offsets of partitions no longer assigned are refused by librdkafka, as they should be.
            if code != .noError && code != .state {
                self.logger.warning("could not store processed offsets: \(code.message)")
            }
        }
        for step in calls.steps {
            switch step {
            case .pause(let keys):
                let list = RDKafkaTopicPartitionList(keys.map { ($0, Int64?.none) })
                rd_kafka_pause_partitions(self.rk, list.pointer)
            case .resume(let keys):
                let list = RDKafkaTopicPartitionList(keys.map { ($0, Int64?.none) })
                rd_kafka_resume_partitions(self.rk, list.pointer)
            case .seek(let offsets):
                // Asynchronous (timeout 0): fetching restarts there.
                let list = RDKafkaTopicPartitionList(offsets.map { ($0.0, Optional($0.1)) })
                if let error = rd_kafka_seek_partitions(self.rk, list.pointer, 0) {
                    self.logger.error(
                        "could not rewind paused partitions: \(String(cString: rd_kafka_error_string(error)))"
                    )
                    rd_kafka_error_destroy(error)
                }
            }
        }
    }

    /// Makes the calls a caller got access for, then gives access back.
    private func makeAndRelease(_ calls: ConsumerStateMachine.Calls?) {
        guard let calls else { return }
        self.make(calls)
        self.releaseAccess()
    }

    /// Serves the group's events while the application is busy with the messages it has and asks for no more.
    ///
    /// Rebalances are served by reads, and the application reads only when it wants a message: a stage whose
    /// every job is in flight (waiting for an upstream's rate limit, say) would hold a rebalance, and with the
    /// eager protocol the whole group, until one of its jobs ends. Every `interval` in which the application did
    /// not ask, this reads once itself, at most one message (kept for the application, at most one batch
    /// buffered). librdkafka pauses the assigned partitions when it queues a rebalance, so the messages queued
    /// before it are skipped and the read reaches it. It stops after `maxIdle` without an ask, so that an
    /// application that hangs still leaves the group after `max.poll.interval.ms`.
    func serveGroupWhileBusy(interval: Duration, maxIdle: Duration) async {
        var lastAsks: UInt64 = .max
        var idle = Duration.zero
        while !Task.isCancelled, !self.closed.isFired {
            try? await Task.sleep(for: interval)
            let asks = self.state.withLock { $0.asks }
            idle = asks == lastAsks ? idle + interval : .zero
            lastAsks = asks
            guard idle > .zero, idle <= maxIdle,
                let calls = self.state.withLock({ $0.serveWhileBusy(batchSize: self.batchSize) })
            else { continue }
            self.make(calls)
            let hasRead = self.readBatch(limit: 1)
            self.releaseAccess()
            if hasRead { self.state.withLock { $0.wakeReader() }?.resume() }
        }
    }

    func owns(_ message: KafkaConsumerMessage) -> Bool {
        self.state.withLock { $0.owns(message) }
    }

    func markProcessed(_ message: KafkaConsumerMessage) {
        self.makeAndRelease(self.state.withLock { $0.markProcessed(message) })
    }

    /// Hands librdkafka every committable offset that moved, and returns once it has them (for `commit()`).
    func storeProcessedOffsets() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            switch self.state.withLock({ $0.storeForCommit(continuation) }) {
            case .make(let calls):
                self.makeAndRelease(calls)
                continuation.resume()
            case .proceed:
                continuation.resume()
            case .waiting:
                break  // resumed by the holder of access once it stored them
            }
        }
    }

    /// Pauses partitions, taking back their buffered messages; with `handingBack`, also that handed-out message
    /// (its partition is paused and fetching restarts at it on resume).
    func pause(_ partitions: [KafkaTopicPartition], handingBack message: KafkaConsumerMessage? = nil) {
        self.makeAndRelease(self.state.withLock { $0.pause(partitions, handingBack: message) })
    }

    func resume(_ partitions: [KafkaTopicPartition]) {
        self.makeAndRelease(self.state.withLock { $0.resume(partitions) })
    }

    // MARK: - Closing

    /// Starts the close sequence (once): the messages end, and as soon as nobody else calls librdkafka for this
    /// consumer, the processed offsets are stored and, on the blocking pool, the consumer leaves the group,
    /// which commits them. ``closed`` fires when it is done.
    func beginClose() {
        let (action, wake) = self.state.withLock { $0.beginClose() }
        wake?.resume()
        if case .start(let calls) = action { self.startCloseSequence(calls) }
    }

    /// The close sequence, with access held for good.
    private func startCloseSequence(_ calls: ConsumerStateMachine.Calls) {
        let client = self.client
        BlockingExecutor.start {
            self.make(calls)
            if !self.state.withLock({ $0.isUnreachable }) {
                // Blocking: leaves the group; the revoke it triggers (rebalance callback, on this thread) stores
                // the last processed offsets and librdkafka commits them.
                let code = RDKafkaCode(rd_kafka_consumer_close(self.rk))
                if code != .noError { self.logger.warning("consumer close: \(code.message)") }
            }
            // Takes the queue's lock: once it returns, no queue-event callback runs any more.
            rd_kafka_queue_cb_event_enable(self.queue, nil, nil)
            rd_kafka_queue_destroy(self.queue)
            // The handle must outlive the calls above, even when the consumer was released meanwhile.
            withExtendedLifetime(client) {}
            for continuation in self.state.withLock({ $0.closed() }) { continuation.resume() }
            self.rebalanceContinuation.finish()
            self.closed.fire()
        }
    }

    // MARK: - Rebalances

    /// The rebalance callback: inside a read, or in the close sequence (either holds access).
    func rebalance(
        handle: OpaquePointer,
        code: rd_kafka_resp_err_t,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) {
        let reported = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) }
        let keys = RDKafkaTopicPartitionList.entries(partitions).map(\.partition)
        switch RDKafkaCode(code) {
        case .assignPartitions:
            let isCooperative = self.state.withLock { $0.assign(keys, reportedProtocol: reported) }
            self.logger.info("partitions assigned: \(keys.sorted().map(\.description).joined(separator: ", "))")
            defer { self.rebalanceContinuation.yield(.assigned(keys.sorted())) }
            if isCooperative {
                Self.check(rd_kafka_incremental_assign(handle, partitions), "incremental assign", self.logger)
            } else {
                let code = RDKafkaCode(rd_kafka_assign(handle, partitions))
                if code != .noError { self.logger.error("assign failed: \(code.message)") }
            }
            // A partition paused under an earlier assignment must not stay paused under this one.
            rd_kafka_resume_partitions(handle, partitions)
        default:
            // Revoked (or lost): stop handing out their messages, store what was processed, then let go. With
            // auto-commit on, librdkafka commits the stored offsets of the removed partitions (unless lost).
            let (isCooperative, stores) = self.state.withLock { $0.revoke(keys, reportedProtocol: reported) }
            var calls = ConsumerStateMachine.Calls()
            calls.stores = stores
            self.make(calls)
            self.logger.info("partitions revoked: \(keys.sorted().map(\.description).joined(separator: ", "))")
            defer { self.rebalanceContinuation.yield(.revoked(keys.sorted())) }
            if isCooperative {
                Self.check(rd_kafka_incremental_unassign(handle, partitions), "incremental unassign", self.logger)
            } else {
                let code = RDKafkaCode(rd_kafka_assign(handle, nil))
                if code != .noError { self.logger.error("unassign failed: \(code.message)") }
            }
        }
    }

    private static func check(_ error: OpaquePointer?, _ what: String, _ logger: Logger) {
        guard let error else { return }
        logger.error("\(what) failed: \(String(cString: rd_kafka_error_string(error)))")
        rd_kafka_error_destroy(error)
    }
}

/// Turns `rd_kafka_message_t`s into ``KafkaConsumerMessage``s, caching topic names by topic handle.
private struct MessageDecoder {
    private var topicNames: [OpaquePointer: String] = [:]
    /// The last topic seen: batches mostly come from one topic.
    private var lastTopic: (handle: OpaquePointer, name: String)?
    /// ``headerLayout``, read once (a static is checked on every access).
    private let headerLayout = Self.headerLayout

    /// Copies C bytes into a new array with one `memcpy`.
    @inline(__always)
    private static func bytes(_ pointer: UnsafeRawPointer, _ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                buffer.baseAddress!.initialize(from: pointer.assumingMemoryBound(to: UInt8.self), count: count)
            }
            initialized = count
        }
    }

    /// Where librdkafka 2.8.0 keeps a consumed message's unparsed headers, or `nil` with any other version.
    ///
    /// `rd_kafka_message_headers` parses a consumed message's headers on first use, and for a record *without*
    /// headers that parse still allocates and frees a reader (`rd_kafka_buf_new_shadow`) just to read the header
    /// count 0: measured, about an eighth of the consuming thread's time. Most records have no headers, so the
    /// decoder first looks at the unparsed bytes itself. They sit in librdkafka's private `rd_kafka_msg_t`, which
    /// starts with the public `rd_kafka_message_t` (src/rdkafka_msg.h, 2.8.0):
    ///
    /// ```c
    /// rd_kafka_message_t rkm_rkmessage;       // 72 bytes on 64-bit
    /// TAILQ_ENTRY(rd_kafka_msg_s) rkm_link;   // two pointers
    /// int rkm_flags; rd_kafka_timestamp_type_t rkm_tstype;
    /// int64_t rkm_timestamp;
    /// rd_kafka_headers_t *rkm_headers;        // parsed headers, if any
    /// rd_kafka_msg_status_t rkm_status; int32_t rkm_broker_id;
    /// union { ...; struct { rd_kafkap_bytes_t binhdrs; int32_t leader_epoch; } consumer; } rkm_u;
    /// // rd_kafkap_bytes_t: { int32_t len; const void *data; ... }
    /// ```
    ///
    /// The layout is private, so the shortcut is taken only with exactly the version it was read from (the one
    /// `scripts/setup.sh` builds and links statically); any other version always asks librdkafka.
    private static let headerLayout: (parsed: Int, length: Int, data: Int)? = {
        guard rd_kafka_version() == 0x0208_00ff, MemoryLayout<UnsafeRawPointer>.size == 8,
            MemoryLayout<rd_kafka_message_t>.size == 72
        else { return nil }
        let parsed = MemoryLayout<rd_kafka_message_t>.size + 2 * 8 + 4 + 4 + 8
        let binaryHeaders = parsed + 8 + 4 + 4
        return (parsed, binaryHeaders, binaryHeaders + 8)
    }()

    /// Whether a consumed message may have headers; `false` only when it certainly has none (the record's
    /// header bytes are missing or just the count 0), so `rd_kafka_message_headers` can be skipped.
    @inline(__always)
    func mayHaveHeaders(_ raw: UnsafeMutablePointer<rd_kafka_message_t>) -> Bool {
        guard let layout = self.headerLayout else { return true }
        let message = UnsafeRawPointer(raw)
        // Parsed already (nobody does, but then they are there).
        if message.load(fromByteOffset: layout.parsed, as: UnsafeRawPointer?.self) != nil { return true }
        let length = message.load(fromByteOffset: layout.length, as: Int32.self)
        if length <= 0 { return false }
        // More than one byte: a count other than 0 (librdkafka decides). One byte: the varint count itself.
        guard length == 1, let data = message.load(fromByteOffset: layout.data, as: UnsafeRawPointer?.self) else {
            return true
        }
        return data.load(as: UInt8.self) != 0
    }

    /// The name of a topic handle, cached.
    mutating func topicName(_ rkt: OpaquePointer?) -> String {
        guard let rkt else { return "" }
        if let last = self.lastTopic, last.handle == rkt { return last.name }
        let name: String
        if let cached = self.topicNames[rkt] {
            name = cached
        } else {
            name = String(cString: rd_kafka_topic_name(rkt))
            self.topicNames[rkt] = name
        }
        self.lastTopic = (rkt, name)
        return name
    }

    mutating func decode(
        _ raw: UnsafeMutablePointer<rd_kafka_message_t>,
        partitionState: Unmanaged<ConsumerStateMachine.PartitionState>
    ) -> KafkaConsumerMessage {
        let message = raw.pointee
        let value = message.payload.map { Self.bytes($0, message.len) } ?? []
        let key = message.key.map { Self.bytes($0, message.key_len) }
        var headers: [KafkaHeader] = []
        var list: OpaquePointer?
        if self.mayHaveHeaders(raw), rd_kafka_message_headers(raw, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            headers.reserveCapacity(rd_kafka_header_cnt(list))
            var index = 0
            var name: UnsafePointer<CChar>?
            var valuePointer: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(list, index, &name, &valuePointer, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(
                    KafkaHeader(
                        key: name.map { String(cString: $0) } ?? "",
                        value: valuePointer.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) }
                    )
                )
                index += 1
            }
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(raw, &timestampType)
        return KafkaConsumerMessage(
            partitionState: partitionState.takeUnretainedValue(),
            offset: message.offset,
            key: key,
            value: value,
            headers: headers,
            timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
        )
    }
}
