import MarqueeKafka
import Synchronization

/// The stage's producer, replaced by a new one when librdkafka declares it unusable: a fatal error, or an
/// idempotent producer the broker fenced (it may after a broker outage made in-flight messages time out). A
/// restart of the worker would fix that; replacing the producer fixes it without one.
///
/// Each job takes ``current`` when it starts; a job whose producer failed so hands it to ``replace(_:)``, which
/// makes a new one once (the jobs that held the old one fail on it too and find it replaced already). The
/// replaced producers are closed with the stage.
final class StageProducer: Sendable {
    private struct State {
        var current: KafkaProducer
        var replaced: [KafkaProducer] = []
    }

    private let make: @Sendable () throws(KafkaError) -> KafkaProducer
    private let state: Mutex<State>

    /// Makes the first producer with `make`, which makes every later one too.
    init(make: @escaping @Sendable () throws(KafkaError) -> KafkaProducer) throws(KafkaError) {
        self.make = make
        self.state = Mutex(State(current: try make()))
    }

    /// The producer jobs starting now use.
    var current: KafkaProducer { self.state.withLock { $0.current } }

    /// Replaces `failed` with a new producer, unless it was replaced already. Returns whether this call replaced
    /// it.
    ///
    /// - Throws: A ``KafkaError`` when no new producer can be made (its configuration is rejected: it was accepted
    ///   before, so this does not happen short of memory).
    func replace(_ failed: KafkaProducer) throws(KafkaError) -> Bool {
        let isCurrent = self.state.withLock { $0.current === failed }
        guard isCurrent else { return false }
        let fresh = try self.make()
        let replaced = self.state.withLock { state -> Bool in
            guard state.current === failed else { return false }
            state.replaced.append(state.current)
            state.current = fresh
            return true
        }
        if !replaced { Task { await fresh.close() } }  // another job replaced it meanwhile
        return replaced
    }

    /// Closes the current producer and every one it replaced.
    func close() async {
        let all = self.state.withLock { $0.replaced + [$0.current] }
        for producer in all { await producer.close() }
    }
}
