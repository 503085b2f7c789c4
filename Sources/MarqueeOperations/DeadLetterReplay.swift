import MarqueeCore
public import MarqueeKafka
import MarqueePipeline

/// Sends dead letters back to their stage's main topic, as fresh deliveries of the same jobs.
///
/// The replayed message has the letter's key and payload byte for byte, and its headers minus the delivery facts
/// of the failed run (`marquee-attempt`, `marquee-not-before`, `marquee-origin`, `marquee-error`,
/// `marquee-error-kind`), plus `marquee-attempt: 1` and `marquee-replayed-from: <dlq topic>/<partition>/<offset>`.
/// The job keeps its id, root, parent and trace context, so lineage holds. The dead letter itself stays where it is.
public enum DeadLetterReplay {
    /// The headers a replay drops: the facts of the failed delivery.
    public static let droppedHeaders: Set<String> = [
        Envelope.Header.attempt, Envelope.Header.notBefore, Envelope.Header.origin, Envelope.Header.error,
        Envelope.Header.errorKind, Envelope.Header.replayedFrom,
    ]

    /// The message that replays `letter` on the main topic of its stage.
    ///
    /// - Parameters:
    ///   - letter: The dead letter.
    ///   - layout: Names the stage's main topic.
    public static func message(replaying letter: DeadLetter, layout: PipelineLayout) -> KafkaProducerMessage {
        let main = layout.stage(letter.id.stage)?.topics.main ?? "\(layout.prefix)\(letter.id.stage)"
        var headers = letter.record.headers.filter { !Self.droppedHeaders.contains($0.key) }
        headers.append(KafkaHeader(key: Envelope.Header.attempt, value: "1"))
        let source = "\(letter.record.topic)/\(letter.record.partition.partition)/\(letter.offset)"
        headers.append(KafkaHeader(key: Envelope.Header.replayedFrom, value: source))
        return KafkaProducerMessage(topic: main, key: letter.record.key, value: letter.record.value, headers: headers)
    }

    /// Sends the replays of `letters` in order, at most `ratePerSecond` a second, and reports each one's outcome
    /// once the broker acknowledged it or refused it.
    ///
    /// - Parameters:
    ///   - letters: The letters to replay.
    ///   - layout: Names each stage's main topic.
    ///   - producer: Sends the messages (idempotent, `acks=all`).
    ///   - ratePerSecond: The most messages sent in any second (`nil`: as fast as the broker takes them).
    ///   - report: Called with each letter and where its replay was stored, or why it was not.
    /// - Throws: A ``KafkaError`` when the producer cannot take messages at all (closed); a message the broker
    ///   refuses is reported, not thrown.
    public static func send(
        _ letters: [DeadLetter],
        layout: PipelineLayout,
        producer: KafkaProducer,
        ratePerSecond: Int? = nil,
        report: (DeadLetter, Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) async throws(KafkaError) {
        let clock = ContinuousClock()
        let started = clock.now
        let slice = max(1, ratePerSecond ?? 1000)
        for (round, start) in stride(from: 0, to: letters.count, by: slice).enumerated() {
            if let ratePerSecond, ratePerSecond > 0, round > 0 {
                // Round n may start n seconds after the first: never more than `ratePerSecond` in any second.
                try? await Task.sleep(until: started + .seconds(round), clock: clock)
            }
            let batch = Array(letters[start..<min(start + slice, letters.count)])
            let results = try await producer.sendCollectingResults(
                batch.map { Self.message(replaying: $0, layout: layout) }
            )
            for (letter, result) in zip(batch, results) { report(letter, result) }
        }
    }
}
