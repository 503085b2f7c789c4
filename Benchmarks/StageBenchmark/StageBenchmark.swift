// Overhead of the stage runtime (MarqueePipeline), for `make bench-stage` (scripts/bench-stage.sh): the same
// work — consume a job, produce one output, commit — through a `Stage` with a no-op handler, and through a bare
// loop written directly on the Kafka layer, with the same concurrency.
//
//   StageBenchmark seed --prefix P [--count 100000]    creates P.fetch and P.records, enqueues N jobs
//   StageBenchmark stage --prefix P [--count 100000]   runs the stage until N jobs finished
//   StageBenchmark bare --prefix P [--count 100000]    runs the bare loop until N jobs finished
//
// stage and bare print one line: msgs_per_sec=… elapsed_ms=… messages=…, timed from the first job started to
// the Nth finished (outputs acknowledged, input marked processed); the group join is not timed.
import ArgumentParser
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import ServiceLifecycle
import Synchronization

import class Foundation.ProcessInfo

@main
struct StageBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "StageBenchmark",
        abstract: "Measure the stage runtime against a bare loop on the Kafka layer.",
        subcommands: [Seed.self, RunStage.self, RunBare.self]
    )
}

struct Options: ParsableArguments {
    @Option(help: "Bootstrap brokers (default: $MARQUEE_BROKERS, else 127.0.0.1:19092).")
    var brokers: String = ProcessInfo.processInfo.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(help: "The topic prefix of this run (topics <prefix>fetch and <prefix>records).")
    var prefix: String

    @Option(help: "How many jobs.")
    var count = 100_000

    @Option(help: "Jobs in flight at once.")
    var concurrency = 16

    @Option(help: "Outputs per job (diagnostics: 0 leaves the producer out).")
    var outputs = 1

    var kafka: KafkaConfiguration {
        var kafka = KafkaConfiguration(brokers: self.brokers)
        kafka.clientID = "marquee-bench-stage"
        return kafka
    }

    var logger: Logger {
        var logger = Logger(label: "bench-stage")
        logger.logLevel = .warning
        return logger
    }
}

/// Counts finished jobs; the Nth resumes the waiter. Records when the first job started.
final class Progress: Sendable {
    private struct State {
        var finished = 0
        var started: ContinuousClock.Instant?
        var ended: ContinuousClock.Instant?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let target: Int
    private let state = Mutex(State())

    init(target: Int) { self.target = target }

    func started() {
        self.state.withLock { if $0.started == nil { $0.started = .now } }
    }

    func finished() {
        let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
            state.finished += 1
            guard state.finished == self.target else { return nil }
            state.ended = .now
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = self.state.withLock { state in
                if state.ended != nil { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    func report() {
        let (started, ended) = self.state.withLock { ($0.started, $0.ended) }
        guard let started, let ended else { return }
        let elapsed = ended - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "msgs_per_sec=\(Int(Double(self.target) / max(seconds, 1e-9))) elapsed_ms=\(Int(seconds * 1000)) messages=\(self.target)"
        )
    }
}

struct Seed: AsyncParsableCommand {
    @OptionGroup var options: Options

    func run() async throws {
        let admin = try KafkaAdmin(configuration: self.options.kafka, logger: self.options.logger)
        _ = try await StageTopics.createAll(
            [
                StageTopics(stage: "fetch", prefix: self.options.prefix, tiers: 1),
                StageTopics(stage: "records", prefix: self.options.prefix, tiers: 0),
            ],
            partitions: 4,
            admin: admin
        )
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: self.options.kafka),
            logger: self.options.logger
        )
        let messages = (0..<self.options.count).map { index in
            let job = FetchJob.tmdbMovie(id: Int64(index + 1), language: "en-US", follow: .none)
            return KafkaProducerMessage(
                topic: "\(self.options.prefix)fetch",
                key: Array(job.dedupeKey.utf8),
                value: job.encoded(),
                headers: Envelope.root().kafkaHeaders
            )
        }
        do {
            try await producer.deliver(messages)
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }
}

/// The no-op handler: one output per job, with the job's key and payload (as the bare loop does).
struct EchoHandler: StageHandler {
    let progress: Progress
    let outputs: Int
    func handle(_ job: StageJob) async throws -> [StageOutput] {
        self.progress.started()
        return (0..<self.outputs).map { _ in
            StageOutput(stage: "records", key: String(decoding: job.key ?? [], as: UTF8.self), payload: job.payload)
        }
    }
}

struct RunStage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stage")
    @OptionGroup var options: Options

    func run() async throws {
        let progress = Progress(target: self.options.count)
        var configuration = StageConfiguration(
            stage: "fetch",
            kafka: self.options.kafka,
            prefix: self.options.prefix,
            retry: RetryPolicy(delays: [.seconds(10)])
        )
        configuration.groupID = "\(self.options.prefix)stage"
        configuration.concurrency = self.options.concurrency
        configuration.consumer = { consumer in
            consumer.sessionTimeout = .seconds(6)
            consumer.heartbeatInterval = .seconds(1)
        }
        configuration.onJobFinished = { _ in progress.finished() }
        let stage = Stage(
            configuration: configuration,
            handler: EchoHandler(progress: progress, outputs: self.options.outputs),
            logger: self.options.logger
        )
        let group = ServiceGroup(services: [stage], logger: self.options.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await progress.wait()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        progress.report()
    }
}

struct RunBare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bare")
    @OptionGroup var options: Options

    func run() async throws {
        let progress = Progress(target: self.options.count)
        var consumerConfiguration = KafkaConsumerConfiguration(
            kafka: self.options.kafka,
            groupID: "\(self.options.prefix)bare",
            topics: ["\(self.options.prefix)fetch"]
        )
        consumerConfiguration.sessionTimeout = .seconds(6)
        consumerConfiguration.heartbeatInterval = .seconds(1)
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: self.options.logger)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(kafka: self.options.kafka),
            logger: self.options.logger
        )
        let output = "\(self.options.prefix)records"
        // The same shape as the stage: up to `concurrency` jobs at once, each producing one output and marking
        // its input processed once the output is acknowledged.
        let limiter = AsyncLimiter(limit: self.options.concurrency)
        try await withThrowingDiscardingTaskGroup { group in
            var received = 0
            for try await message in consumer.messages {
                await limiter.acquire()
                received += 1
                group.addTask {
                    defer { limiter.release() }
                    progress.started()
                    // A hand-written worker passes its headers on too (the stage writes a child envelope).
                    try await producer.deliver([
                        KafkaProducerMessage(
                            topic: output,
                            key: message.key,
                            value: message.value,
                            headers: message.headers
                        )
                    ])
                    consumer.markProcessed(message)
                    progress.finished()
                }
                if received == self.options.count { break }
            }
        }
        await progress.wait()
        await consumer.close()
        await producer.close()
        progress.report()
    }
}
