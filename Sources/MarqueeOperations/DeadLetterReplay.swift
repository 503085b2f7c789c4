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
    /// A replay the broker did not acknowledge for a passing reason (it is down, cut off, or slower than the
    /// delivery timeout) is sent again, with a wait doubling from 1 s to 10 s, until `patience` has passed since
    /// the broker last took a message: an outage in the middle of a replay delays it, and no letter is left
    /// behind. Such a replay may have been stored the first time too: it is then there twice, which is harmless,
    /// since both are the same job (same id, same payload) and the pipeline's upserts are idempotent.
    ///
    /// - Parameters:
    ///   - letters: The letters to replay.
    ///   - layout: Names each stage's main topic.
    ///   - producer: Makes the producer that sends the messages (idempotent, `acks=all`): once at the start, and
    ///     again when the broker fenced the one before (a passing outage can leave an idempotent producer so).
    ///   - ratePerSecond: The most messages sent in any second (`nil`: as fast as the broker takes them).
    ///   - patience: How long to go on sending again after the broker last acknowledged a replay.
    ///   - resending: Called before each resend with how many replays go again, the error of the first, and the
    ///     wait before they go.
    ///   - report: Called with each letter and where its replay was stored, or why it was not.
    /// - Throws: A ``KafkaError`` when the producer cannot take messages at all (closed); a message the broker
    ///   refuses is reported, not thrown.
    public static func send(
        _ letters: [DeadLetter],
        layout: PipelineLayout,
        producer makeProducer: () throws(KafkaError) -> KafkaProducer,
        ratePerSecond: Int? = nil,
        patience: Duration = .seconds(600),
        resending: (Int, KafkaError, Duration) -> Void = { _, _, _ in },
        report: (DeadLetter, Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) async throws(KafkaError) {
        var producer = try makeProducer()
        do throws(KafkaError) {
            try await Self.send(
                letters,
                layout: layout,
                producer: &producer,
                makeProducer: makeProducer,
                ratePerSecond: ratePerSecond,
                patience: patience,
                resending: resending,
                report: report
            )
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }

    private static func send(
        _ letters: [DeadLetter],
        layout: PipelineLayout,
        producer: inout KafkaProducer,
        makeProducer: () throws(KafkaError) -> KafkaProducer,
        ratePerSecond: Int?,
        patience: Duration,
        resending: (Int, KafkaError, Duration) -> Void,
        report: (DeadLetter, Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) async throws(KafkaError) {
        let clock = ContinuousClock()
        let started = clock.now
        var lastAcknowledged = started
        let slice = max(1, ratePerSecond ?? 1000)
        for (round, start) in stride(from: 0, to: letters.count, by: slice).enumerated() {
            if let ratePerSecond, ratePerSecond > 0, round > 0 {
                // Round n may start n seconds after the first: never more than `ratePerSecond` in any second.
                try? await Task.sleep(until: started + .seconds(round), clock: clock)
            }
            var pending = Array(letters[start..<min(start + slice, letters.count)])
            var wait = Duration.seconds(1)
            while !pending.isEmpty {
                let results = try await producer.sendCollectingResults(
                    pending.map { Self.message(replaying: $0, layout: layout) }
                )
                var again: [(DeadLetter, KafkaError)] = []
                for (letter, result) in zip(pending, results) {
                    switch result {
                    case .success:
                        lastAcknowledged = clock.now
                        report(letter, result)
                    case .failure(let error)
                    where (error.isRetriable || error.leavesProducerUnusable)
                        && clock.now - lastAcknowledged < patience:
                        again.append((letter, error))
                    case .failure:
                        report(letter, result)
                    }
                }
                guard let first = again.first else { break }
                if again.contains(where: { $0.1.leavesProducerUnusable }) {
                    let unusable = producer
                    producer = try makeProducer()
                    await unusable.close()
                }
                resending(again.count, first.1, wait)
                try? await Task.sleep(for: wait, clock: clock)
                wait = min(wait * 2, .seconds(10))
                pending = again.map(\.0)
            }
        }
    }
}
