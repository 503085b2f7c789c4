internal import Crdkafka
import Synchronization

/// Collects the delivery reports of one `send` call.
///
/// Each message carries a pointer to its slot (`msg_opaque`); the delivery-report callback, on the producer's poll
/// thread, records the outcome there. When every message has an outcome, the waiting task resumes. The slots live
/// as long as the batch, and the batch lives until the sender resumed, which happens only after the last report.
final class DeliveryBatch: Sendable {
    private struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
    }

    private struct State {
        var remaining: Int
        var results: [Result<KafkaDeliveryReport, KafkaError>?]
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let topics: [String]
    private let state: Mutex<State>
    /// Written once in `init`, only read afterwards (by the poll thread), freed in `deinit`.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<Slot>
    private let lastError: @Sendable () -> String

    init(messages: [KafkaProducerMessage], lastError: @escaping @Sendable () -> String) {
        self.topics = messages.map(\.topic)
        self.state = Mutex(State(remaining: messages.count, results: Array(repeating: nil, count: messages.count)))
        self.lastError = lastError
        self.slots = .allocate(capacity: messages.count)
        let unmanaged = Unmanaged.passUnretained(self)
        for index in 0..<messages.count {
            (self.slots + index).initialize(to: Slot(batch: unmanaged, index: index))
        }
    }

    deinit {
        self.slots.deinitialize(count: self.topics.count)
        self.slots.deallocate()
    }

    func slot(_ index: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(self.slots + index) }

    /// Called from the delivery-report callback.
    static func deliver(slot: UnsafeMutableRawPointer, code: rd_kafka_resp_err_t, partition: Int32, offset: Int64) {
        let slot = slot.assumingMemoryBound(to: Slot.self).pointee
        let batch = slot.batch.takeUnretainedValue()
        let code = RDKafkaCode(code)
        if code == .noError {
            batch.complete(
                slot.index,
                with: .success(KafkaDeliveryReport(topic: batch.topics[slot.index], partition: partition, offset: offset))
            )
        } else {
            let reason: String
            switch code {
            case .messageTimedOut:
                reason = "the broker did not acknowledge the message for '\(batch.topics[slot.index])' in time"
                    + batch.lastError()
            case .purgeQueue, .purgeInflight:
                reason = "the producer closed before the message for '\(batch.topics[slot.index])' was acknowledged"
            default:
                reason = "delivery to '\(batch.topics[slot.index])' failed: \(code.message)"
            }
            batch.complete(slot.index, with: .failure(KafkaError(code: .delivery, reason: reason, rdKafkaCode: code)))
        }
    }

    func complete(_ index: Int, error: KafkaError) {
        self.complete(index, with: .failure(error))
    }

    /// Marks every message from `index` on as failed (they were never enqueued).
    func fail(from index: Int, with error: KafkaError) {
        for index in index..<self.topics.count { self.complete(index, with: .failure(error)) }
    }

    private func complete(_ index: Int, with result: Result<KafkaDeliveryReport, KafkaError>) {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            if state.results[index] != nil { preconditionFailure("message \(index) of a batch reported twice") }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func waitForAll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = self.state.withLock { state in
                if state.remaining == 0 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    func results() -> [Result<KafkaDeliveryReport, KafkaError>] {
        self.state.withLock { state in state.results.map { $0! } }
    }
}
