// The consumer's whole mutable state, and nothing that calls librdkafka: this file must not import Crdkafka
// (LockAuditTests checks it), so whatever runs under the consumer's lock cannot call into librdkafka.

/// The state of a ``KafkaConsumer``, kept in one `Mutex` by ``ConsumerCore``: the messages read and not yet handed
/// out, the assigned partitions, the iterating task's wait, and who may call librdkafka now.
///
/// Its mutating methods change the state and return what to do next (an action); ``ConsumerCore`` does it after
/// releasing the lock. librdkafka calls whose order must follow the state's (storing offsets, pausing, resuming,
/// seeking) and reading the queue are made by one thread at a time, the holder of **access**: the iterating task
/// while it reads, a caller of `markProcessed`/`pause`/`resume` while it makes the calls it asked for, or the
/// close sequence (for good). A call asked for while someone else holds access waits in ``pendingCalls`` and is
/// made by the holder before it lets go, so calls reach librdkafka in the order the state changed, without a
/// lock around them (docs/concurrency.md, "Kafka clients").
struct ConsumerStateMachine {
    /// One assignment of one partition. A class, so each handed-out message can point at its own (no lookup
    /// per `markProcessed`), and a message of an earlier assignment finds its object revoked.
    ///
    /// `@unchecked Sendable`: `topicPartition` never changes; every other field is read and written only under
    /// ``ConsumerCore``'s lock. That lock already makes each access exclusive, so the fields skip the runtime's
    /// exclusivity checks (`swift_beginAccess`/`swift_endAccess`, twice per message: `fetched` and `processed`).
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

    /// librdkafka calls that follow the state, in the order the state asked for them.
    struct Calls {
        /// Offsets for `rd_kafka_offsets_store`: one past the last processed message of each partition.
        var stores: [(KafkaTopicPartition, Int64)] = []
        var steps: [Step] = []

        enum Step {
            case pause([KafkaTopicPartition])
            case resume([KafkaTopicPartition])
            case seek([(KafkaTopicPartition, Int64)])
        }

        var isEmpty: Bool { self.stores.isEmpty && self.steps.isEmpty }
    }

    enum Termination {
        case closed
        case failed(KafkaError)
    }

    /// Who holds access (the right to read the queue and make the state's calls).
    private enum Access {
        case free
        case reader
        /// A caller of `markProcessed`, `pause`, `resume` or `commit`, making the calls it asked for.
        case caller
        /// The close sequence; it never gives access back.
        case close
    }

    private enum Lifecycle {
        case running
        /// Closing: the close sequence starts when access is free.
        case closing
        /// The close sequence holds access.
        case closeStarted
        case closed
    }

    /// Messages read from librdkafka, not yet handed out, in reverse order: the next one is the last, so handing
    /// it out moves it out of the array (`popLast`) instead of copying it.
    private var buffer: [KafkaConsumerMessage] = []
    private(set) var partitions: [KafkaTopicPartition: PartitionState] = [:]
    private var lifecycle = Lifecycle.running
    private var access = Access.free
    private var pendingCalls = Calls()
    /// ``stopMessages()`` was called: iterations end, the consumer stays in the group.
    private var isStopped = false
    /// No broker answered at start-up: leaving the group would only wait for one.
    private(set) var isUnreachable = false
    private(set) var termination: Termination?
    private var hasDirty = false
    /// The reader is suspended (or about to be): `markProcessed` stores offsets itself meanwhile.
    private var isReaderIdle = false
    /// The group's rebalance protocol as librdkafka last reported it: it reports none once the group handle is
    /// terminating (a revocation inside the close sequence).
    private var isCooperative = false
    /// How many messages the application asked for: ``ConsumerCore/serveGroupWhileBusy(interval:maxIdle:)`` tells
    /// from it whether the application still reads.
    private(set) var asks: UInt64 = 0
    /// The iterating task, suspended until the queue has something, access is free, or the consumer closes.
    private var readerWaiter: CheckedContinuation<Void, Never>?
    /// A wake-up came while the reader was not suspended: it reads again instead of suspending.
    private var isWakePending = false
    /// The reader found access taken and waits for its holder to let go.
    private var isReaderWaitingForAccess = false
    /// `commit()` callers waiting until the offsets processed before they asked are stored.
    private var storeWaiters: [CheckedContinuation<Void, Never>] = []

    // MARK: - Reading

    /// The next buffered message, without suspending: the fast path of the iteration.
    mutating func nextBuffered() -> KafkaConsumerMessage? {
        self.asks &+= 1
        return self.isStopped ? nil : self.buffer.popLast()
    }

    enum NextAction {
        case message(KafkaConsumerMessage)
        case end(KafkaError?)
        /// The reader holds access now: make `calls`, then read a batch.
        case read(Calls)
        /// Someone else holds access: suspend until woken.
        case wait
    }

    mutating func next() -> NextAction {
        self.asks &+= 1
        if !self.isStopped, let message = self.buffer.popLast() { return .message(message) }
        switch self.termination {
        case .closed: return .end(nil)
        case .failed(let error): return .end(error)
        case nil: break
        }
        if self.lifecycle != .running || self.isStopped { return .end(nil) }
        guard case .free = self.access else {
            self.isReaderWaitingForAccess = true
            return .wait
        }
        self.access = .reader
        return .read(self.takeCalls())
    }

    /// For ``ConsumerCore/serveGroupWhileBusy(interval:maxIdle:)``: whether the application is busy with what it
    /// has (not suspended, not closing, less than a batch buffered), and if so, access to read one message: the
    /// calls to make first, then the read.
    mutating func serveWhileBusy(batchSize: Int) -> Calls? {
        let isBusy =
            !self.isReaderIdle && self.lifecycle == .running && !self.isStopped && self.termination == nil
            && self.buffer.count < batchSize
        guard isBusy, case .free = self.access else { return nil }
        self.access = .reader
        return self.takeCalls()
    }

    /// The partition states of a batch's runs of messages (one run per partition in a row), for decoding; `nil`
    /// for a partition not assigned or paused. Registers each message's offset with its partition, and rewinds a
    /// paused partition to the first message read just before the pause took effect (its seek is a pending call,
    /// made when the reader releases access).
    ///
    /// - Parameters:
    ///   - runs: Each run's partition and its offsets, in batch order.
    mutating func register(
        runs: [(KafkaTopicPartition, ArraySlice<Int64>)],
        owners: inout [Unmanaged<PartitionState>?]
    ) {
        owners.removeAll(keepingCapacity: true)
        var rewinds: [(KafkaTopicPartition, Int64)] = []
        for (key, offsets) in runs {
            guard let partition = self.partitions[key], let first = offsets.first else {
                owners.append(nil)
                continue
            }
            if partition.isUserPaused {
                // Read just before the pause took effect: fetch it again from here on resume.
                if first < (partition.rewindOffset ?? .max) {
                    partition.rewind(to: first)
                    rewinds.append((key, first))
                }
                owners.append(nil)
                continue
            }
            for offset in offsets { partition.tracker.fetched(offset) }
            partition.nextOffset = offsets.last! + 1
            owners.append(Unmanaged.passUnretained(partition))
        }
        if !rewinds.isEmpty { self.pendingCalls.steps.append(.seek(rewinds)) }
    }

    /// Puts a decoded batch (reverse order, like the buffer) behind the buffered messages. Messages of a partition
    /// paused since ``register(runs:owners:)`` are taken back like buffered ones (the seek is a pending call, after
    /// the pause's own); `decoded` is left empty, with its storage, for the next batch.
    ///
    /// - Parameter partitions: The partitions ``register(runs:owners:)`` returned for the batch.
    mutating func deliver(_ decoded: inout [KafkaConsumerMessage], partitions: [PartitionState]) {
        let changed = partitions.filter { $0.isUserPaused || $0.isRevoked }
        if !changed.isEmpty {
            var rewinds: [(KafkaTopicPartition, Int64)] = []
            for partition in changed {
                let first = decoded.lazy.filter { $0.partitionState === partition }.map(\.offset).min()
                decoded.removeAll { $0.partitionState === partition }
                guard let first, !partition.isRevoked else { continue }
                partition.tracker.dropFetched(from: first)
                if first < (partition.rewindOffset ?? .max) {
                    partition.rewind(to: first)
                    rewinds.append((partition.topicPartition, first))
                }
            }
            if !rewinds.isEmpty { self.pendingCalls.steps.append(.seek(rewinds)) }
        }
        if self.buffer.isEmpty {
            swap(&self.buffer, &decoded)
        } else {
            // Read while messages were still buffered (the group service's one-message reads): those go first.
            decoded.append(contentsOf: self.buffer)
            self.buffer.removeAll(keepingCapacity: true)
            swap(&self.buffer, &decoded)
        }
    }

    enum ReleaseAction {
        /// Still holding access: make these calls, then release again.
        case make(Calls)
        /// Access is free (or passed to the close sequence). Resume these; start the close sequence if asked.
        case released(resume: [CheckedContinuation<Void, Never>], startClose: Calls?)
    }

    /// The holder is done with librdkafka. It stays the holder while calls are pending (it makes them and
    /// releases again); otherwise access goes to the close sequence if one waits, or becomes free, and whoever
    /// waited for it is woken.
    ///
    /// - Parameter isIdle: The reader found the queue empty and is about to suspend: processed offsets are
    ///   stored by `markProcessed` itself from now on, and the ones marked so far are stored first.
    mutating func release(isIdle: Bool = false) -> ReleaseAction {
        if isIdle { self.isReaderIdle = true }
        let calls = self.takeCalls()
        if !calls.isEmpty { return .make(calls) }
        var resume = self.storeWaiters
        self.storeWaiters = []
        if self.lifecycle == .closing {
            self.lifecycle = .closeStarted
            self.access = .close
            return .released(resume: resume, startClose: self.takeCalls())
        }
        self.access = .free
        if self.isReaderWaitingForAccess {
            self.isReaderWaitingForAccess = false
            if let waiter = self.wakeReader() { resume.append(waiter) }
        }
        return .released(resume: resume, startClose: nil)
    }

    /// Suspends the reader unless a wake-up came meanwhile; returns whether to resume it now.
    mutating func suspendReader(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        if self.isWakePending || self.lifecycle != .running || self.isStopped || self.termination != nil {
            self.isWakePending = false
            return true
        }
        self.readerWaiter = continuation
        return false
    }

    /// The reader resumed: it reads again, so `markProcessed` leaves storing to it.
    mutating func readerResumed() {
        self.isReaderIdle = false
    }

    /// Wakes the suspended reader (the queue became readable, the consumer is stopping, or its task was
    /// cancelled); a wake-up while it is not suspended makes its next suspension return at once.
    mutating func wakeReader() -> CheckedContinuation<Void, Never>? {
        guard let waiter = self.readerWaiter else {
            self.isWakePending = true
            return nil
        }
        self.readerWaiter = nil
        return waiter
    }

    mutating func stopMessages() -> CheckedContinuation<Void, Never>? {
        self.isStopped = true
        return self.wakeReader()
    }

    // MARK: - Processing, pausing

    var assignment: [KafkaTopicPartition] { Array(self.partitions.keys).sorted() }

    var uncommittedCount: Int {
        // The trackers also count the buffered messages, which were read but not handed out yet.
        max(0, self.partitions.values.reduce(0) { $0 + $1.tracker.outstandingCount } - self.buffer.count)
    }

    var pausedPartitions: [KafkaTopicPartition] {
        self.partitions.compactMap { $0.value.isUserPaused ? $0.key : nil }.sorted()
    }

    func owns(_ message: KafkaConsumerMessage) -> Bool { !message.partitionState.isRevoked }

    /// Records a processed message; returns the calls to make when the caller got access (the reader is
    /// suspended, so nobody else would store the offset soon).
    mutating func markProcessed(_ message: KafkaConsumerMessage) -> Calls? {
        // Used through the (borrowed) message, not copied out of it: no reference counting per message.
        guard !message.partitionState.isRevoked, message.partitionState.tracker.processed(message.offset) else {
            return nil
        }
        message.partitionState.isDirty = true
        self.hasDirty = true
        return self.isReaderIdle ? self.acquireForCaller() : nil
    }

    enum StoreAction {
        /// Make these calls (access is the caller's), release, then commit.
        case make(Calls)
        /// Someone else holds access; the continuation is resumed once it stored the offsets.
        case waiting
        /// Nothing can be stored any more (closing): commit what librdkafka has.
        case proceed
    }

    /// `commit()` wants every processed offset stored before it commits.
    mutating func storeForCommit(_ continuation: CheckedContinuation<Void, Never>) -> StoreAction {
        if self.lifecycle == .closeStarted || self.lifecycle == .closed { return .proceed }
        if case .free = self.access {
            guard let calls = self.acquireForCaller() else { return .proceed }
            return .make(calls)
        }
        self.storeWaiters.append(continuation)
        return .waiting
    }

    /// Pauses partitions, taking back their buffered messages; with `handingBack`, also that handed-out message
    /// (its partition is paused and fetching restarts at it on resume).
    mutating func pause(_ keys: [KafkaTopicPartition], handingBack message: KafkaConsumerMessage?) -> Calls? {
        var paused: [KafkaTopicPartition] = []
        var rewinds: [(KafkaTopicPartition, Int64)] = []
        for key in Set(keys) {
            guard let partition = self.partitions[key] else { continue }
            if partition.isUserPaused {
                // Already paused: a handed-back message moves the restart point back to it.
                if let message, message.partitionState === partition, message.offset < (partition.rewindOffset ?? .max)
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
            self.buffer.removeAll { message in
                guard message.partitionState === partition else { return false }
                firstDropped = min(firstDropped ?? message.offset, message.offset)
                return true
            }
            if let firstDropped { partition.tracker.dropFetched(from: firstDropped) }
            // Always seek, also with nothing taken back: fetching restarts at the next message not handed out,
            // whatever librdkafka's read position says. Never forward: a message handed out before an earlier
            // rewind and handed back only now can lie past what was read again since.
            var restart = firstDropped
            if let next = partition.nextOffset { restart = min(restart ?? next, next) }
            if let restart {
                partition.rewind(to: restart)
                rewinds.append((key, restart))
            }
            paused.append(key)
        }
        if !paused.isEmpty { self.pendingCalls.steps.append(.pause(paused)) }
        if !rewinds.isEmpty { self.pendingCalls.steps.append(.seek(rewinds)) }
        return self.acquireForCaller()
    }

    mutating func resume(_ keys: [KafkaTopicPartition]) -> Calls? {
        var resumed: [KafkaTopicPartition] = []
        for key in Set(keys) {
            guard let partition = self.partitions[key], partition.isUserPaused else { continue }
            partition.isUserPaused = false
            partition.rewindOffset = nil
            resumed.append(key)
        }
        if !resumed.isEmpty { self.pendingCalls.steps.append(.resume(resumed)) }
        return self.acquireForCaller()
    }

    /// Takes access for a caller when calls are pending and nobody holds it.
    private mutating func acquireForCaller() -> Calls? {
        guard case .free = self.access, self.lifecycle == .running else { return nil }
        let calls = self.takeCalls()
        guard !calls.isEmpty else { return nil }
        self.access = .caller
        return calls
    }

    /// The pending calls, with the stores of every partition whose committable offset moved.
    private mutating func takeCalls(only: Set<KafkaTopicPartition>? = nil) -> Calls {
        var calls = Calls()
        swap(&calls.steps, &self.pendingCalls.steps)
        calls.stores = self.takeStores(only: only)
        return calls
    }

    private mutating func takeStores(only: Set<KafkaTopicPartition>?) -> [(KafkaTopicPartition, Int64)] {
        guard self.hasDirty else { return [] }
        var entries: [(KafkaTopicPartition, Int64)] = []
        var stillDirty = false
        for (key, partition) in self.partitions where partition.isDirty {
            guard only?.contains(key) ?? true else {
                stillDirty = true
                continue
            }
            if let offset = partition.tracker.committableOffset { entries.append((key, offset)) }
            partition.isDirty = false
        }
        self.hasDirty = stillDirty
        return entries
    }

    // MARK: - Rebalances (inside a read or the close sequence: the caller holds access)

    /// Assigned partitions each get a fresh state; with the eager protocol the whole assignment is replaced.
    ///
    /// - Parameter reportedProtocol: librdkafka's `rd_kafka_rebalance_protocol`, if it reported one.
    /// - Returns: Whether the group uses the cooperative protocol.
    mutating func assign(_ keys: [KafkaTopicPartition], reportedProtocol: String?) -> Bool {
        let isCooperative = self.updateProtocol(reportedProtocol)
        if !isCooperative {
            for partition in self.partitions.values { partition.isRevoked = true }
            self.partitions = [:]
        }
        for key in keys {
            self.partitions[key]?.isRevoked = true
            self.partitions[key] = PartitionState(key)
        }
        return isCooperative
    }

    /// Revoked (or lost): stop handing out their messages, and store what was processed before they go.
    ///
    /// - Returns: Whether the group uses the cooperative protocol, and the offsets to store before unassigning.
    mutating func revoke(
        _ keys: [KafkaTopicPartition],
        reportedProtocol: String?
    ) -> (isCooperative: Bool, stores: [(KafkaTopicPartition, Int64)]) {
        let isCooperative = self.updateProtocol(reportedProtocol)
        let revoked = Set(keys)
        let stores = self.takeStores(only: revoked)
        self.buffer.removeAll { revoked.contains($0.topicPartition) }
        for key in revoked {
            self.partitions[key]?.isRevoked = true
            self.partitions[key] = nil
        }
        return (isCooperative, stores)
    }

    private mutating func updateProtocol(_ reported: String?) -> Bool {
        if let reported { self.isCooperative = reported == "COOPERATIVE" }
        return self.isCooperative
    }

    // MARK: - Ending

    enum CloseAction {
        /// Nothing to start (already closing, or the holder of access starts it when it lets go).
        case none
        /// Access is the close sequence's: make these calls, then leave the group.
        case start(Calls)
    }

    /// Starts closing (once): the messages end, and the close sequence takes access as soon as it is free.
    mutating func beginClose() -> (action: CloseAction, wake: CheckedContinuation<Void, Never>?) {
        let wake = self.wakeReader()
        guard self.lifecycle == .running else { return (.none, wake) }
        self.lifecycle = .closing
        guard case .free = self.access else { return (.none, wake) }
        self.lifecycle = .closeStarted
        self.access = .close
        return (.start(self.takeCalls()), wake)
    }

    /// No broker answered at start-up: the consumer fails, and its close does not wait to leave the group.
    mutating func markUnreachable() { self.isUnreachable = true }

    /// Ends the messages (once): iterations end, or throw the failure.
    mutating func finish(_ termination: Termination) -> CheckedContinuation<Void, Never>? {
        if self.termination == nil { self.termination = termination }
        if case .failed = termination { self.buffer.removeAll() }
        return self.wakeReader()
    }

    /// The close sequence is done.
    mutating func closed() -> [CheckedContinuation<Void, Never>] {
        self.lifecycle = .closed
        var resume = self.storeWaiters
        self.storeWaiters = []
        if self.termination == nil { self.termination = .closed }
        if let waiter = self.wakeReader() { resume.append(waiter) }
        return resume
    }

    var failure: KafkaError? {
        if case .failed(let error) = self.termination { return error }
        return nil
    }
}
