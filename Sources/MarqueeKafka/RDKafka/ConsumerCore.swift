internal import Crdkafka
internal import DequeModule
import Dispatch
import Logging
import Synchronization

/// The state of a ``KafkaConsumer`` shared by its poll thread, its rebalance callback, the iterating task and
/// `markProcessed`/`pause`/`resume` callers.
///
/// All mutable state is one `State` inside a `Mutex`. librdkafka calls made under the lock (`pause`, `resume`,
/// `seek`, `offsets_store`) are asynchronous in librdkafka and never call back into this type, so they cannot
/// deadlock; they are made under the lock so their order matches the state's.
final class ConsumerCore: Sendable {
    private struct PartitionState {
        var generation: UInt64
        var tracker = PartitionOffsetTracker()
        var isUserPaused = false
        /// While paused: the offset fetching restarts from on resume (the first message taken back).
        var rewindOffset: Int64?
        /// The tracker's committable offset moved and is not yet stored in librdkafka.
        var isDirty = false
    }

    private enum Termination {
        case closed
        case failed(KafkaError)
    }

    private struct State {
        var buffer: Deque<KafkaConsumerMessage> = []
        var waiter: CheckedContinuation<Void, Never>?
        var partitions: [KafkaTopicPartition: PartitionState] = [:]
        var nextGeneration: UInt64 = 1
        /// The poll thread waits for room in the buffer (the application is behind).
        var isPollerWaiting = false
        var isClosing = false
        var termination: Termination?
        var hasDirty = false
    }

    private let state = Mutex(State())
    private let maxBuffered: Int
    private let logger: Logger
    private let handle = Mutex<SendableOpaquePointer?>(nil)
    private let queue = Mutex<SendableOpaquePointer?>(nil)
    /// Wakes the poll thread when the buffer has room again, or on close.
    private let roomAvailable = DispatchSemaphore(value: 0)

    init(maxBuffered: Int, logger: Logger) {
        self.maxBuffered = maxBuffered
        self.logger = logger
    }

    func attach(_ client: RDKafkaClient) {
        self.handle.withLock { $0 = SendableOpaquePointer(client.handle) }
    }

    private var rk: OpaquePointer {
        guard let handle = self.handle.withLock({ $0 }) else { preconditionFailure("ConsumerCore used before attach") }
        return handle.pointer
    }

    var assignment: [KafkaTopicPartition] {
        self.state.withLock { Array($0.partitions.keys) }.sorted()
    }

    // MARK: - Application side

    func next() async throws(KafkaError) -> KafkaConsumerMessage? {
        while true {
            enum Step {
                case message(KafkaConsumerMessage, wakePoller: Bool)
                case end(KafkaError?)
                case wait
            }
            let step: Step = self.state.withLock { state in
                if let message = state.buffer.popFirst() {
                    let wake = state.isPollerWaiting && state.buffer.count <= self.maxBuffered / 2
                    if wake { state.isPollerWaiting = false }
                    return .message(message, wakePoller: wake)
                }
                switch state.termination {
                case .closed: return .end(nil)
                case .failed(let error): return .end(error)
                case nil: return .wait
                }
            }
            switch step {
            case .message(let message, let wake):
                if wake { self.roomAvailable.signal() }
                return message
            case .end(let error):
                if let error { throw error }
                return nil
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = self.state.withLock { state in
                        guard state.buffer.isEmpty, state.termination == nil else { return true }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    func markProcessed(_ message: KafkaConsumerMessage) {
        self.state.withLock { state in
            // Mutate in place: copying the entry out would copy its tracker's storage on every call.
            guard let index = state.partitions.index(forKey: message.topicPartition),
                state.partitions.values[index].generation == message.generation
            else { return }
            if state.partitions.values[index].tracker.processed(message.offset) {
                state.partitions.values[index].isDirty = true
                state.hasDirty = true
            }
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
        // Walk by index and mutate in place (iterating the dictionary while writing to it would copy it).
        var index = state.partitions.startIndex
        while index != state.partitions.endIndex {
            defer { index = state.partitions.index(after: index) }
            guard state.partitions.values[index].isDirty else { continue }
            let key = state.partitions.keys[index]
            guard only?.contains(key) ?? true else {
                stillDirty = true
                continue
            }
            if let offset = state.partitions.values[index].tracker.committableOffset { entries.append((key, offset)) }
            state.partitions.values[index].isDirty = false
        }
        state.hasDirty = stillDirty
        guard !entries.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(entries)
        let code = RDKafkaCode(rd_kafka_offsets_store(self.rk, list.pointer))
        if code != .noError && code != .state {
            self.logger.warning("could not store processed offsets: \(code.message)")
        }
    }

    func pause(_ partitions: [KafkaTopicPartition]) {
        self.state.withLock { state in
            var paused: [(KafkaTopicPartition, Int64?)] = []
            var rewinds: [(KafkaTopicPartition, Int64?)] = []
            for key in Set(partitions) {
                guard var partition = state.partitions[key], !partition.isUserPaused else { continue }
                partition.isUserPaused = true
                // Take back what was fetched but not handed out; it is fetched again from there on resume.
                var firstDropped: Int64?
                state.buffer.removeAll { message in
                    guard message.topic == key.topic, message.partition == key.partition else { return false }
                    firstDropped = min(firstDropped ?? message.offset, message.offset)
                    return true
                }
                if let firstDropped {
                    partition.tracker.dropFetched(from: firstDropped)
                    partition.rewindOffset = firstDropped
                    rewinds.append((key, firstDropped))
                }
                state.partitions[key] = partition
                paused.append((key, nil))
            }
            guard !paused.isEmpty else { return }
            let list = RDKafkaTopicPartitionList(paused)
            rd_kafka_pause_partitions(self.rk, list.pointer)
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
                guard state.partitions[key]?.isUserPaused == true else { continue }
                state.partitions[key]?.isUserPaused = false
                state.partitions[key]?.rewindOffset = nil
                resumed.append((key, nil))
            }
            guard !resumed.isEmpty else { return }
            let list = RDKafkaTopicPartitionList(resumed)
            rd_kafka_resume_partitions(self.rk, list.pointer)
        }
    }

    func requestClose() {
        let queue: SendableOpaquePointer? = self.state.withLock { state in
            state.isClosing = true
            return self.queue.withLock { $0 }
        }
        if let queue { rd_kafka_queue_yield(queue.pointer) }
        self.roomAvailable.signal()
    }

    // MARK: - Poll thread

    func pollLoop(client: RDKafkaClient, connectTimeout: Duration) {
        guard let queue = rd_kafka_queue_get_consumer(client.handle) else {
            preconditionFailure("rd_kafka_queue_get_consumer returned NULL after rd_kafka_poll_set_consumer")
        }
        self.queue.withLock { $0 = SendableOpaquePointer(queue) }
        defer {
            self.queue.withLock { $0 = nil }
            rd_kafka_queue_destroy(queue)
        }

        // A broker must answer before anything else; otherwise fail clearly instead of waiting forever.
        do {
            _ = try client.metadata(topic: nil, localOnly: true, timeout: connectTimeout)
        } catch {
            self.logger.error("consumer could not reach a broker: \(error.reason)")
            self.finish(.failed(error))
            return
        }

        let capacity = 1024
        let batch = UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>.allocate(capacity: capacity)
        defer { batch.deallocate() }
        var decoder = MessageDecoder()
        while true {
            let room = self.prepareForPoll()
            guard let room else { break }  // closing
            if room <= 0 {
                // The application is behind: read nothing more until it catches up. librdkafka keeps
                // prefetching up to its own bounds (queued.min.messages, queued.max.messages.kbytes).
                _ = self.roomAvailable.wait(timeout: .now() + .milliseconds(100))
                continue
            }
            // consume_batch_queue waits until the batch is *full* or the timeout passed, so wait for the first
            // message only, then take what else is already there without waiting.
            var count = rd_kafka_consume_batch_queue(queue, 100, batch, 1)
            if count <= 0 { continue }
            let limit = min(capacity, max(room, 1))
            if limit > 1 {
                let more = rd_kafka_consume_batch_queue(queue, 0, batch + 1, limit - 1)
                if more > 0 { count += more }
            }
            var fetched: [KafkaConsumerMessage] = []
            fetched.reserveCapacity(count)
            var fatal: KafkaError?
            for index in 0..<count {
                guard let raw = batch[index] else { continue }
                defer { rd_kafka_message_destroy(raw) }
                let code = RDKafkaCode(raw.pointee.err)
                if code != .noError {
                    let text = rd_kafka_message_errstr(raw).map { String(cString: $0) } ?? code.message
                    if code == .fatal {
                        fatal = KafkaError(code: .consumer, reason: "fatal consumer error: \(text)", rdKafkaCode: code)
                    } else {
                        self.logger.warning("consumer error: \(text)", metadata: [MarqueeKafkaLoggingKeys.error: "\(code.name)"])
                    }
                    continue
                }
                fetched.append(decoder.decode(raw, generation: 0))
            }
            self.deliver(fetched)
            if let fatal {
                self.finish(.failed(fatal))
                return
            }
        }
        self.storeProcessedOffsets()
        // Leaves the group; the revoke it triggers commits the stored offsets (rebalance callback below).
        let code = RDKafkaCode(rd_kafka_consumer_close(client.handle))
        if code != .noError { self.logger.warning("consumer close: \(code.message)") }
        self.finish(.closed)
    }

    /// Stores processed offsets and says how many messages the buffer has room for, or `nil` when closing.
    private func prepareForPoll() -> Int? {
        self.state.withLock { state -> Int? in
            if state.isClosing { return nil }
            self.storeDirty(&state, only: nil)
            let room = self.maxBuffered - state.buffer.count
            state.isPollerWaiting = room <= 0
            return room
        }
    }

    private func deliver(_ fetched: [KafkaConsumerMessage]) {
        guard !fetched.isEmpty else { return }
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            var current: (key: KafkaTopicPartition, index: Dictionary<KafkaTopicPartition, PartitionState>.Index)?
            var rewinds: [(KafkaTopicPartition, Int64?)] = []
            for message in fetched {
                let key = message.topicPartition
                if current?.key != key {
                    current = nil
                    guard let index = state.partitions.index(forKey: key) else {
                        continue  // revoked meanwhile: its next owner starts from the committed offset
                    }
                    let partition = state.partitions.values[index]
                    if partition.isUserPaused {
                        // Fetched just before the pause took effect: take it back like the buffered ones.
                        if message.offset < (partition.rewindOffset ?? .max) {
                            state.partitions[key]?.rewindOffset = message.offset
                            rewinds.append((key, message.offset))
                        }
                        continue
                    }
                    current = (key, index)
                }
                guard let current else { continue }
                state.partitions.values[current.index].tracker.fetched(message.offset)
                var message = message
                message.generation = state.partitions.values[current.index].generation
                state.buffer.append(message)
            }
            self.rewind(rewinds)
            defer { state.waiter = nil }
            return state.buffer.isEmpty ? nil : state.waiter
        }
        waiter?.resume()
    }

    private func finish(_ termination: Termination) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            if state.termination == nil { state.termination = termination }
            if case .failed = termination { state.buffer.removeAll() }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The rebalance callback, on the poll thread.
    func rebalance(
        handle: OpaquePointer,
        code: rd_kafka_resp_err_t,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) {
        let isCooperative = String(cString: rd_kafka_rebalance_protocol(handle)) == "COOPERATIVE"
        let keys = RDKafkaTopicPartitionList.entries(partitions).map(\.partition)
        switch RDKafkaCode(code) {
        case .assignPartitions:
            self.state.withLock { state in
                if !isCooperative { state.partitions = [:] }
                for key in keys {
                    state.partitions[key] = PartitionState(generation: state.nextGeneration)
                    state.nextGeneration += 1
                }
            }
            self.logger.info("partitions assigned: \(keys.sorted().map(\.description).joined(separator: ", "))")
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
                for key in revoked { state.partitions[key] = nil }
            }
            self.logger.info("partitions revoked: \(keys.sorted().map(\.description).joined(separator: ", "))")
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

    mutating func decode(_ raw: UnsafeMutablePointer<rd_kafka_message_t>, generation: UInt64) -> KafkaConsumerMessage {
        let message = raw.pointee
        let topic: String
        if let rkt = message.rkt, let name = self.topicNames[rkt] {
            topic = name
        } else {
            topic = message.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
            if let rkt = message.rkt { self.topicNames[rkt] = topic }
        }
        let value = message.payload.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: message.len)) } ?? []
        let key = message.key.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: message.key_len)) }
        var headers: [KafkaHeader] = []
        var list: OpaquePointer?
        if rd_kafka_message_headers(raw, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
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
            topic: topic,
            partition: message.partition,
            offset: message.offset,
            key: key,
            value: value,
            headers: headers,
            timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp,
            generation: generation
        )
    }
}
