internal import Crdkafka
import Logging
import MarqueeCore
import Synchronization

/// The state of a ``KafkaConsumer`` shared by the iterating task, its rebalance callback, `markProcessed`,
/// `pause`/`resume` callers and the close sequence.
///
/// The iterating task reads from librdkafka itself, without blocking: `next()` takes a batch with a timeout of 0
/// and, when the queue is empty, suspends until librdkafka's queue-event callback says something arrived. No
/// thread hop sits between librdkafka and the application, and the consumer reads exactly as fast as the
/// application asks (librdkafka's own prefetch bounds, `queued.min.messages` and `queued.max.messages.kbytes`,
/// bound the memory). Rebalance callbacks run inside those reads, and inside the one-message reads of
/// ``serveGroupWhileBusy(interval:maxIdle:)`` while the application asks for nothing.
///
/// All mutable state is one `State` inside a `Mutex`. librdkafka calls made under the lock (`pause`, `resume`,
/// `seek`, `offsets_store`) return without waiting on the application and call back into this type only through
/// the queue-event callback, so they cannot deadlock; they are made under the lock so their order matches the
/// state's. Reading from the queue is
/// serialised by `reader`. The suspended reader and its wake-ups live in `signal`, a lock of their own: the
/// queue-event callback runs on whichever thread enqueues, possibly one inside a librdkafka call made under
/// `state`, so it may take nothing but `signal`, and nothing holding `signal` calls librdkafka.
/// Lock order: `reader`, `state`, `signal`.
@usableFromInline
final class ConsumerCore: Sendable {
    /// One assignment of one partition. A class, so each handed-out message can point at its own (no lookup
    /// per `markProcessed`), and a message of an earlier assignment finds its object revoked.
    ///
    /// `@unchecked Sendable`: `topicPartition` never changes; every other field is read and written only under
    /// `ConsumerCore.state`'s lock. That lock already makes each access exclusive, so the fields skip the
    /// runtime's exclusivity checks (`swift_beginAccess`/`swift_endAccess`, twice per message: `fetched` and
    /// `processed`).
    final class PartitionState: @unchecked Sendable {
        /// Also the topic and partition of every message it hands out (one reference instead of a string each).
        let topicPartition: KafkaTopicPartition
        @exclusivity(unchecked) var isRevoked = false
        @exclusivity(unchecked) var tracker = PartitionOffsetTracker()
        @exclusivity(unchecked) var isUserPaused = false
        /// While paused: the offset fetching restarts from on resume (the first message taken back).
        @exclusivity(unchecked) var rewindOffset: Int64?
        /// The offset of the next message to hand out: one past the last one read, or where fetching was rewound
        /// to; `nil` before the first read. Every pause seeks here: librdkafka's own restart point (the position
        /// its reads reached) can be ahead of it, when messages it had read were taken back and not yet fetched
        /// again.
        @exclusivity(unchecked) var nextOffset: Int64?
        /// The tracker's committable offset moved and is not yet stored in librdkafka.
        @exclusivity(unchecked) var isDirty = false

        init(_ topicPartition: KafkaTopicPartition) { self.topicPartition = topicPartition }

        /// Fetching restarts at `offset` on resume (the caller seeks there).
        func rewind(to offset: Int64) {
            self.rewindOffset = offset
            self.nextOffset = offset
        }
    }

    private enum Termination {
        case closed
        case failed(KafkaError)
    }

    private struct State {
        /// Messages read from librdkafka, not yet handed out (at most one batch), in reverse order: the next one
        /// is the last, so handing it out moves it out of the array (`popLast`) instead of copying it.
        var buffer: [KafkaConsumerMessage] = []
        var partitions: [KafkaTopicPartition: PartitionState] = [:]
        var isClosing = false
        /// ``stopMessages()`` was called: iterations end, the consumer stays in the group.
        var isStopped = false
        var isCloseStarted = false
        /// No broker answered at start-up: leaving the group would only wait for one.
        var isUnreachable = false
        var termination: Termination?
        var hasDirty = false
        /// The reader is suspended (or about to be): `markProcessed` stores offsets itself meanwhile.
        var isReaderIdle = false
        /// The group's rebalance protocol as librdkafka last reported it: it reports none once the group handle
        /// is terminating (a revocation inside the close sequence).
        var isCooperative = false
        /// How many messages the application asked for: the group service (``serveGroupWhileBusy(interval:maxIdle:)``) tells
        /// from it whether the application still reads.
        var asks: UInt64 = 0
    }

    /// What only the reader touches: the batch array, the partition of each message in it, and the topic-name
    /// cache.
    private struct Reader: ~Copyable {
        let batch: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>
        /// Unretained: a batch is decoded under the state lock, while `State.partitions` holds each one.
        let owners: UnsafeMutablePointer<Unmanaged<PartitionState>?>
        var decoder = MessageDecoder()
        var isClosed = false
    }

    private static let batchCapacity = 1024

    private struct Signal {
        /// The iterating task, suspended until the queue has something (or the consumer closes).
        var waiter: CheckedContinuation<Void, Never>?
        /// A wake-up came while nobody waited.
        var isPending = false
    }

    private let state = Mutex(State())
    private let signal = Mutex(Signal())
    private let reader: Mutex<Reader>
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
        let owners = UnsafeMutablePointer<Unmanaged<PartitionState>?>.allocate(capacity: Self.batchCapacity)
        owners.initialize(repeating: nil, count: Self.batchCapacity)
        self.reader = Mutex(Reader(batch: .allocate(capacity: Self.batchCapacity), owners: owners))
        (self.rebalances, self.rebalanceContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    deinit {
        self.reader.withLock { reader in
            reader.batch.deallocate()
            reader.owners.deallocate()
        }
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
        // Called on a librdkafka thread when an element lands in the empty queue; it only wakes the reader.
        rd_kafka_queue_cb_event_enable(queue, { _, opaque in
            guard let opaque else { return }
            Unmanaged<ConsumerCore>.fromOpaque(opaque).takeUnretainedValue().wakeReader()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    var assignment: [KafkaTopicPartition] {
        self.state.withLock { Array($0.partitions.keys) }.sorted()
    }

    var uncommittedCount: Int {
        self.state.withLock { state in
            // The trackers also count the buffered messages, which were read but not handed out yet.
            max(0, state.partitions.values.reduce(0) { $0 + $1.tracker.outstandingCount } - state.buffer.count)
        }
    }

    var pausedPartitions: [KafkaTopicPartition] {
        self.state.withLock { state in state.partitions.compactMap { $0.value.isUserPaused ? $0.key : nil } }.sorted()
    }

    /// Checks on a thread of its own that a broker answers; if none does in time, ends the messages with
    /// ``KafkaError/Code-swift.struct/brokerUnreachable``.
    func probe(timeout: Duration) {
        let probeMetadata = self.probeMetadata!
        _ = DedicatedThread.start(name: "marquee-kafka-probe") {
            do throws(KafkaError) {
                try probeMetadata(timeout)
            } catch {
                self.logger.error("consumer could not reach a broker: \(error.reason)")
                self.state.withLock { $0.isUnreachable = true }
                self.finish(.failed(error))
                self.beginClose()
            }
        }
    }

    // MARK: - Application side

    /// The next buffered message, without suspending: the fast path of ``next()``.
    @usableFromInline
    func nextBuffered() -> KafkaConsumerMessage? {
        self.state.withLock { state in
            state.asks &+= 1
            return state.isStopped ? nil : state.buffer.popLast()
        }
    }

    /// Ends every iteration of the messages; reading stops, the consumer stays in the group.
    func stopMessages() {
        self.state.withLock { $0.isStopped = true }
        self.wakeReader()
    }

    @usableFromInline
    func next() async throws(KafkaError) -> KafkaConsumerMessage? {
        while true {
            enum Step {
                case message(KafkaConsumerMessage)
                case end(KafkaError?)
                case read
            }
            let step: Step = self.state.withLock { state in
                state.asks &+= 1
                if !state.isStopped, let message = state.buffer.popLast() { return .message(message) }
                switch state.termination {
                case .closed: return .end(nil)
                case .failed(let error): return .end(error)
                case nil: return state.isClosing || state.isStopped ? .end(nil) : .read
                }
            }
            switch step {
            case .message(let message):
                return message
            case .end(let error):
                if let error { throw error }
                return nil
            case .read:
                if self.readBatch() { continue }
                // A cancelled reader ends its iteration (nothing is lost: unread messages stay in librdkafka).
                if Task.isCancelled { return nil }
                await withTaskCancellationHandler {
                    await self.waitUntilReadable()
                } onCancel: {
                    self.wakeReader()
                }
            }
        }
    }

    /// Wakes the suspended reader: the queue became readable, or the consumer is closing. Takes only `signal`.
    private func wakeReader() {
        let waiter: CheckedContinuation<Void, Never>? = self.signal.withLock { signal in
            guard let waiter = signal.waiter else {
                signal.isPending = true
                return nil
            }
            signal.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    private func waitUntilReadable() async {
        // Idle: hand librdkafka what was processed meanwhile, so its background commit can send it.
        self.state.withLock { state in
            self.storeDirty(&state, only: nil)
            state.isReaderIdle = true
        }
        defer { self.state.withLock { $0.isReaderIdle = false } }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = self.signal.withLock { signal in
                if signal.isPending {
                    signal.isPending = false
                    return true
                }
                signal.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Reads one batch without waiting. Returns whether the buffer may have something (or the state changed);
    /// `false` when the queue was empty.
    private func readBatch(limit: Int? = nil) -> Bool {
        let outcome: Bool? = self.reader.withLockIfAvailable { reader -> Bool in
            guard !reader.isClosed else { return true }
            let count = rd_kafka_consume_batch_queue(self.queue, 0, reader.batch, limit ?? self.batchSize)
            guard count > 0 else {
                self.state.withLock { self.storeDirty(&$0, only: nil) }
                return false
            }
            let raws = UnsafeMutableBufferPointer(start: reader.batch, count: count)
            defer { for raw in raws { if let raw { rd_kafka_message_destroy(raw) } } }
            let errors = self.state.withLock { state in
                self.storeDirty(&state, only: nil)
                return self.append(raws, to: &state, owners: reader.owners, decoder: &reader.decoder)
            }
            for (code, text) in errors {
                if code == .fatal {
                    self.finish(.failed(KafkaError(code: .consumer, reason: "fatal consumer error: \(text)", rdKafkaCode: code)))
                } else {
                    self.logger.warning("consumer error: \(text)", metadata: [MarqueeKafkaLoggingKeys.error: "\(code.name)"])
                }
            }
            return true
        }
        // The close sequence holds the reader: nothing to read any more.
        return outcome ?? true
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
            let (asks, isBusy) = self.state.withLock { state in
                (state.asks, !state.isReaderIdle && !state.isClosing && !state.isStopped && state.termination == nil
                    && state.buffer.count < self.batchSize)
            }
            idle = asks == lastAsks ? idle + interval : .zero
            lastAsks = asks
            guard isBusy, idle > .zero, idle <= maxIdle else { continue }
            if self.readBatch(limit: 1) { self.wakeReader() }
        }
    }

    func owns(_ message: KafkaConsumerMessage) -> Bool {
        self.state.withLock { _ in !message.partitionState.isRevoked }
    }

    func markProcessed(_ message: KafkaConsumerMessage) {
        self.state.withLock { state in
            // Used through the (borrowed) message, not copied out of it: no reference counting per message.
            guard !message.partitionState.isRevoked, message.partitionState.tracker.processed(message.offset) else {
                return
            }
            message.partitionState.isDirty = true
            state.hasDirty = true
            // Nobody is reading (the reader stores before each batch): store now.
            if state.isReaderIdle { self.storeDirty(&state, only: nil) }
        }
    }

    /// Hands librdkafka the committable offsets that moved; its background commit (or `rd_kafka_commit`) sends
    /// them. Stored offsets of partitions no longer assigned are refused by librdkafka, as they should be.
    func storeProcessedOffsets() {
        self.state.withLock { state in self.storeDirty(&state, only: nil) }
    }

    private func storeDirty(_ state: inout State, only: Set<KafkaTopicPartition>?) {
        guard state.hasDirty else { return }
        var entries: [(KafkaTopicPartition, Int64?)] = []
        var stillDirty = false
        for (key, partition) in state.partitions where partition.isDirty {
            guard only?.contains(key) ?? true else {
                stillDirty = true
                continue
            }
            if let offset = partition.tracker.committableOffset { entries.append((key, offset)) }
            partition.isDirty = false
        }
        state.hasDirty = stillDirty
        guard !entries.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(entries)
        let code = RDKafkaCode(rd_kafka_offsets_store(self.rk, list.pointer))
        if code != .noError && code != .state {
            self.logger.warning("could not store processed offsets: \(code.message)")
        }
    }

    /// Pauses partitions, taking back their buffered messages; with `handingBack`, also that handed-out message
    /// (its partition is paused and fetching restarts at it on resume).
    func pause(_ partitions: [KafkaTopicPartition], handingBack message: KafkaConsumerMessage? = nil) {
        self.state.withLock { state in
            var paused: [(KafkaTopicPartition, Int64?)] = []
            var rewinds: [(KafkaTopicPartition, Int64?)] = []
            for key in Set(partitions) {
                guard let partition = state.partitions[key] else { continue }
                if partition.isUserPaused {
                    // Already paused: a handed-back message moves the restart point back to it.
                    if let message, message.partitionState === partition,
                        message.offset < (partition.rewindOffset ?? .max)
                    {
                        partition.tracker.dropFetched(from: message.offset)
                        partition.rewind(to: message.offset)
                        rewinds.append((key, message.offset))
                    }
                    continue
                }
                partition.isUserPaused = true
                // Take back what was fetched but not handed out; it is fetched again from there on resume.
                var firstDropped: Int64?
                if let message, message.partitionState === partition { firstDropped = message.offset }
                state.buffer.removeAll { message in
                    guard message.topic == key.topic, message.partition == key.partition else { return false }
                    firstDropped = min(firstDropped ?? message.offset, message.offset)
                    return true
                }
                if let firstDropped { partition.tracker.dropFetched(from: firstDropped) }
                // Always seek, also with nothing taken back: fetching restarts at the next message not handed
                // out, whatever librdkafka's read position says. Never forward: a message handed out before an
                // earlier rewind and handed back only now can lie past what was read again since.
                var restart = firstDropped
                if let next = partition.nextOffset { restart = min(restart ?? next, next) }
                if let restart {
                    partition.rewind(to: restart)
                    rewinds.append((key, restart))
                }
                paused.append((key, nil))
            }
            if !paused.isEmpty {
                let list = RDKafkaTopicPartitionList(paused)
                rd_kafka_pause_partitions(self.rk, list.pointer)
            }
            self.rewind(rewinds)
        }
    }

    /// Seeks paused partitions to where fetching must restart on resume (asynchronous: timeout 0).
    private func rewind(_ partitions: [(KafkaTopicPartition, Int64?)]) {
        guard !partitions.isEmpty else { return }
        let seeks = RDKafkaTopicPartitionList(partitions)
        if let error = rd_kafka_seek_partitions(self.rk, seeks.pointer, 0) {
            self.logger.error("could not rewind paused partitions: \(String(cString: rd_kafka_error_string(error)))")
            rd_kafka_error_destroy(error)
        }
    }

    func resume(_ partitions: [KafkaTopicPartition]) {
        self.state.withLock { state in
            var resumed: [(KafkaTopicPartition, Int64?)] = []
            for key in Set(partitions) {
                guard let partition = state.partitions[key], partition.isUserPaused else { continue }
                partition.isUserPaused = false
                partition.rewindOffset = nil
                resumed.append((key, nil))
            }
            guard !resumed.isEmpty else { return }
            let list = RDKafkaTopicPartitionList(resumed)
            rd_kafka_resume_partitions(self.rk, list.pointer)
        }
    }

    /// Starts the close sequence (once): the messages end, processed offsets are stored, and on a thread of its
    /// own the consumer leaves the group, which commits them. ``closed`` fires when it is done.
    func beginClose() {
        let isFirst: Bool = self.state.withLock { state in
            state.isClosing = true
            defer { state.isCloseStarted = true }
            return !state.isCloseStarted
        }
        self.wakeReader()
        guard isFirst else { return }
        let client = self.client
        _ = DedicatedThread.start(name: "marquee-kafka-consumer-close") {
            // Waits for a read in progress (they never block), then keeps readers out.
            self.reader.withLock { reader in
                reader.isClosed = true
                let leave = self.state.withLock { state in
                    self.storeDirty(&state, only: nil)
                    return !state.isUnreachable
                }
                if leave {
                    // Blocking: leaves the group; the revoke it triggers (rebalance callback, on this thread)
                    // commits the stored offsets.
                    let code = RDKafkaCode(rd_kafka_consumer_close(self.rk))
                    if code != .noError { self.logger.warning("consumer close: \(code.message)") }
                }
                rd_kafka_queue_cb_event_enable(self.queue, nil, nil)
                rd_kafka_queue_destroy(self.queue)
            }
            // The handle must outlive the calls above, even when the consumer was released meanwhile.
            withExtendedLifetime(client) {}
            self.finish(.closed)
            self.rebalanceContinuation.finish()
            self.closed.fire()
        }
    }

    /// Decodes a batch straight into the buffer, registering each message with its partition's tracker.
    /// Messages of partitions revoked meanwhile are dropped (their next owner starts from the committed offset);
    /// those of partitions paused meanwhile are taken back like the buffered ones.
    ///
    /// - Returns: The error events of the batch, to log or act on outside the lock.
    private func append(
        _ raws: UnsafeMutableBufferPointer<UnsafeMutablePointer<rd_kafka_message_t>?>,
        to state: inout State,
        owners: UnsafeMutablePointer<Unmanaged<PartitionState>?>,
        decoder: inout MessageDecoder
    ) -> [(RDKafkaCode, String)] {
        var errors: [(RDKafkaCode, String)] = []
        var rewinds: [(KafkaTopicPartition, Int64?)] = []
        // The partition of the current run of messages (a batch holds runs from one partition each).
        // Unretained, like `owners`: `state.partitions` holds each one while the lock is held.
        var run: (rkt: OpaquePointer?, partition: Int32, state: Unmanaged<PartitionState>?)?
        // First pass, in offset order: errors, partitions and their trackers. The partition of each message to
        // hand out (nil: skip it).
        for (index, raw) in raws.enumerated() {
            owners[index] = nil
            guard let raw else { continue }
            let code = RDKafkaCode(raw.pointee.err)
            guard code == .noError else {
                errors.append((code, rd_kafka_message_errstr(raw).map { String(cString: $0) } ?? code.message))
                continue
            }
            if run == nil || run!.rkt != raw.pointee.rkt || run!.partition != raw.pointee.partition {
                let key = KafkaTopicPartition(topic: decoder.topicName(raw.pointee.rkt), partition: raw.pointee.partition)
                var partition = state.partitions[key]
                if let paused = partition, paused.isUserPaused {
                    // Read just before the pause took effect: fetch it again from here on resume.
                    if raw.pointee.offset < (paused.rewindOffset ?? .max) {
                        paused.rewind(to: raw.pointee.offset)
                        rewinds.append((key, raw.pointee.offset))
                    }
                    partition = nil
                }
                run = (raw.pointee.rkt, raw.pointee.partition, partition.map { Unmanaged.passUnretained($0) })
            }
            guard let partition = run?.state else { continue }
            // Used without retaining it (the dictionary holds it), unlike a strong local would be.
            partition._withUnsafeGuaranteedRef {
                $0.tracker.fetched(raw.pointee.offset)
                $0.nextOffset = raw.pointee.offset + 1
            }
            owners[index] = partition
        }
        // Second pass, backwards: the buffer is a stack whose last element is handed out first. Anything still
        // buffered (nothing, as the reader reads only when the buffer is empty) stays ahead of this batch.
        // Decoded straight into the buffer, whose storage is kept from batch to batch (handing out only pops).
        var earlier: [KafkaConsumerMessage] = []
        if !state.buffer.isEmpty { swap(&earlier, &state.buffer) }
        state.buffer.reserveCapacity(raws.count + earlier.count)
        for index in raws.indices.reversed() {
            guard let partition = owners[index], let raw = raws[index] else { continue }
            state.buffer.append(decoder.decode(raw, partitionState: partition))
        }
        state.buffer.append(contentsOf: earlier)
        self.rewind(rewinds)
        return errors
    }

    /// Why the consumer stopped, when it failed.
    var failure: KafkaError? {
        self.state.withLock { state in
            if case .failed(let error) = state.termination { return error }
            return nil
        }
    }

    private func finish(_ termination: Termination) {
        self.state.withLock { state in
            if state.termination == nil { state.termination = termination }
            if case .failed = termination { state.buffer.removeAll() }
        }
        self.wakeReader()
    }

    /// The rebalance callback: inside a read of `next()`, or in the close sequence.
    func rebalance(
        handle: OpaquePointer,
        code: rd_kafka_resp_err_t,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) {
        let reported = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) }
        let isCooperative = self.state.withLock { state in
            if let reported { state.isCooperative = reported == "COOPERATIVE" }
            return state.isCooperative
        }
        let keys = RDKafkaTopicPartitionList.entries(partitions).map(\.partition)
        switch RDKafkaCode(code) {
        case .assignPartitions:
            self.state.withLock { state in
                if !isCooperative {
                    for partition in state.partitions.values { partition.isRevoked = true }
                    state.partitions = [:]
                }
                for key in keys {
                    state.partitions[key]?.isRevoked = true
                    state.partitions[key] = PartitionState(key)
                }
            }
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
            let revoked = Set(keys)
            self.state.withLock { state in
                self.storeDirty(&state, only: revoked)
                state.buffer.removeAll { revoked.contains($0.topicPartition) }
                for key in revoked {
                    state.partitions[key]?.isRevoked = true
                    state.partitions[key] = nil
                }
            }
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
            if count > 0 { buffer.baseAddress!.initialize(from: pointer.assumingMemoryBound(to: UInt8.self), count: count) }
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
        partitionState: Unmanaged<ConsumerCore.PartitionState>
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
