// A stage process for the integration tests' kill -9 and SIGTERM scenarios.
//
// Usage: StageWorker <brokers> <topic-prefix> <group> <work-milliseconds | deaf>
// Runs the `fetch` stage with a handler that works for <work-milliseconds> and then emits one `records` output
// whose key and payload are the job's marquee-id. With `deaf`, every job waits instead on something that never
// answers and ignores cancellation (phase "waiting on a deaf dependency"). Prints "processing" once the first
// job starts. SIGTERM/SIGINT shut it down gracefully (5 s timeout for in-flight jobs, then 2 s of cancellation
// grace); the stage logs to standard output.
import Logging
import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

struct EchoHandler: StageHandler {
    let work: Duration
    let started: StartedFlag

    func handle(_ job: StageJob) async throws -> [StageOutput] {
        self.started.announce()
        try await Task.sleep(for: self.work)
        let id = job.envelope.id.rawValue
        return [StageOutput(stage: "records", key: id, payload: Array(id.utf8))]
    }
}

/// Every job waits on a continuation nobody resumes, and cancelling the job does not end the wait.
final class DeafHandler: StageHandler {
    let started: StartedFlag
    let waits = Mutex<[CheckedContinuation<Void, Never>]>([])

    init(started: StartedFlag) { self.started = started }

    func handle(_ job: StageJob) async throws -> [StageOutput] {
        self.started.announce()
        job.enter("waiting on a deaf dependency")
        await withCheckedContinuation { continuation in self.waits.withLock { $0.append(continuation) } }
        return []
    }
}

final class StartedFlag: Sendable {
    private let done = Atomic<Bool>(false)
    func announce() {
        if !self.done.exchange(true, ordering: .relaxed) {
            let line = Array("processing\n".utf8)
            _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        }
    }
}

@main
struct StageWorker {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let deaf = arguments.count == 5 && arguments[4] == "deaf"
        guard arguments.count == 5, let work = deaf ? 0 : Int(arguments[4]) else {
            let usage = Array("usage: StageWorker <brokers> <topic-prefix> <group> <work-milliseconds | deaf>\n".utf8)
            _ = usage.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
        LoggingSystem.bootstrap(StreamLogHandler.standardOutput)
        var logger = Logger(label: "stage-worker")
        logger.logLevel = .notice
        var configuration = StageConfiguration(
            stage: "fetch",
            kafka: KafkaConfiguration(brokers: arguments[1]),
            prefix: arguments[2],
            retry: RetryPolicy(delays: [.milliseconds(200)], jitter: 0)
        )
        configuration.groupID = arguments[3]
        configuration.concurrency = 8
        configuration.shutdownTimeout = .seconds(5)
        configuration.cancellationGrace = .seconds(2)
        configuration.consumer = { consumer in
            consumer.sessionTimeout = .seconds(6)
            consumer.heartbeatInterval = .seconds(1)
            consumer.commitInterval = .milliseconds(100)
        }
        if deaf {
            try await Self.run(
                Stage(configuration: configuration, handler: DeafHandler(started: StartedFlag()), logger: logger),
                logger: logger
            )
        } else {
            let handler = EchoHandler(work: .milliseconds(work), started: StartedFlag())
            try await Self.run(Stage(configuration: configuration, handler: handler, logger: logger), logger: logger)
        }
    }

    static func run(_ stage: some Service, logger: Logger) async throws {
        let group = ServiceGroup(services: [stage], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
