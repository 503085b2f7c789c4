internal import Crdkafka
import Synchronization

/// Collects the delivery reports of one `send` call.
///
/// Each message carries a pointer to its slot (`msg_opaque`); the delivery-report callback, on the producer's poll
/// thread, writes the outcome into that slot (each slot exactly once) and counts down. The thread that counts to
/// zero resumes the waiting sender; the atomic count orders the slot writes before the sender reads them. The
/// slots live as long as the batch, and the batch lives until the sender resumed, which happens only after the
/// last report.
final class DeliveryBatch: Sendable {
    /// One message's outcome, as librdkafka reported it.
    struct Outcome {
        var code: Int32
        var partition: Int32
        var offset: Int64
    }

    private struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        var outcome: Outcome
    }

    private enum Waiter {
        case none
        case waiting(CheckedContinuation<Void, Never>)
        case done
    }

    let count: Int
    private let remaining: Atomic<Int>
    /// Done from the start when there is nothing to wait for.
    private let waiter: Mutex<Waiter>
    /// Failures before librdkafka took the message (not enqueued, cancelled, closed): rare, so kept aside.
    private let localErrors = Mutex<[Int: KafkaError]>([:])
    /// Written once per slot (by the poll thread, or the sender for local failures), read after completion.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<Slot>

    init(count: Int) {
        self.count = count
        self.remaining = Atomic(count)
        self.waiter = Mutex(count == 0 ? .done : .none)
        self.slots = .allocate(capacity: count)
        let unmanaged = Unmanaged.passUnretained(self)
        for index in 0..<count {
            (self.slots + index).initialize(
                to: Slot(batch: unmanaged, outcome: Outcome(code: 0, partition: -1, offset: -1))
            )
        }
    }

    deinit {
        self.slots.deinitialize(count: self.count)
        self.slots.deallocate()
    }

    func slot(_ index: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(self.slots + index) }

    /// Called from the delivery-report callback.
    static func deliver(
        slot pointer: UnsafeMutableRawPointer,
        code: rd_kafka_resp_err_t,
        partition: Int32,
        offset: Int64
    ) {
        let slot = pointer.assumingMemoryBound(to: Slot.self)
        slot.pointee.outcome = Outcome(code: code.rawValue, partition: partition, offset: offset)
        slot.pointee.batch.takeUnretainedValue().countDown()
    }

    /// Records a failure of a message librdkafka never took.
    func fail(_ index: Int, with error: KafkaError) {
        self.localErrors.withLock { $0[index] = error }
        self.countDown()
    }

    /// Marks every message from `index` on as failed (they were never enqueued).
    func fail(from index: Int, with error: KafkaError) {
        for index in index..<self.count { self.fail(index, with: error) }
    }

    private func countDown() {
        guard self.remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        let waiting: CheckedContinuation<Void, Never>? = self.waiter.withLock { waiter in
            defer { waiter = .done }
            if case .waiting(let continuation) = waiter { return continuation }
            return nil
        }
        waiting?.resume()
    }

    func waitForAll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone: Bool = self.waiter.withLock { waiter in
                if case .done = waiter { return true }
                waiter = .waiting(continuation)
                return false
            }
            if isDone { continuation.resume() }
        }
    }

    /// The first failure, if any; call after ``waitForAll()``.
    func firstError(topics: (Int) -> String, lastError: () -> String) -> KafkaError? {
        let local = self.localErrors.withLock { $0 }
        for index in 0..<self.count {
            if let error = local[index] { return error }
            let outcome = self.slots[index].outcome
            if outcome.code != 0 {
                return Self.error(RDKafkaCode(rawValue: outcome.code), topic: topics(index), lastError: lastError)
            }
        }
        return nil
    }

    /// Every message's outcome; call after ``waitForAll()``.
    func results(topics: (Int) -> String, lastError: () -> String) -> [Result<KafkaDeliveryReport, KafkaError>] {
        let local = self.localErrors.withLock { $0 }
        return (0..<self.count).map { index in
            if let error = local[index] { return .failure(error) }
            let outcome = self.slots[index].outcome
            let topic = topics(index)
            guard outcome.code == 0 else {
                return .failure(Self.error(RDKafkaCode(rawValue: outcome.code), topic: topic, lastError: lastError))
            }
            return .success(KafkaDeliveryReport(topic: topic, partition: outcome.partition, offset: outcome.offset))
        }
    }

    private static func error(_ code: RDKafkaCode, topic: String, lastError: () -> String) -> KafkaError {
        let reason: String
        switch code {
        case .messageTimedOut:
            reason = "the broker did not acknowledge the message for '\(topic)' in time" + lastError()
        case .purgeQueue, .purgeInflight:
            reason = "the producer closed before the message for '\(topic)' was acknowledged"
        default:
            reason = "delivery to '\(topic)' failed: \(code.message)"
        }
        return KafkaError(code: .delivery, reason: reason, rdKafkaCode: code)
    }
}
