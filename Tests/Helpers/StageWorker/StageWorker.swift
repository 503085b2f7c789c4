// A stage process for the integration tests' kill -9 and SIGTERM scenarios.
//
// Usage: StageWorker <brokers> <topic-prefix> <group> <work-milliseconds>
// Runs the `fetch` stage with a handler that works for <work-milliseconds> and then emits one `records` output
// whose key and payload are the job's marquee-id. Prints "processing" once the first job starts. SIGTERM/SIGINT
// shut it down gracefully (5 s timeout for in-flight jobs).
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
        guard arguments.count == 5, let work = Int(arguments[4]) else {
            let usage = Array("usage: StageWorker <brokers> <topic-prefix> <group> <work-milliseconds>\n".utf8)
            _ = usage.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
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
        configuration.consumer = { consumer in
            consumer.sessionTimeout = .seconds(6)
            consumer.heartbeatInterval = .seconds(1)
            consumer.commitInterval = .milliseconds(100)
        }
        let stage = Stage(
            configuration: configuration,
            handler: EchoHandler(work: .milliseconds(work), started: StartedFlag()),
            logger: logger
        )
        let group = ServiceGroup(services: [stage], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
