// A consumer-group member for the integration tests' multi-process scenarios.
//
// Usage: KafkaGroupMember <brokers> <group> <topic> <output-file>
// Consumes <topic> in <group>; for each message, writes "<partition> <value>" and a newline to standard output
// (one write call, so a kill -9 leaves whole lines) and to <output-file>, and then marks it processed: a line
// is the proof that the message was processed. Runs until SIGTERM/SIGINT, then commits and leaves the group.
import Logging
import MarqueeKafka
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

@main
struct KafkaGroupMember {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5 else {
            say("usage: KafkaGroupMember <brokers> <group> <topic> <output-file>", to: 2)
            exit(2)
        }
        var logger = Logger(label: "group-member")
        logger.logLevel = .info
        var configuration = KafkaConsumerConfiguration(
            kafka: KafkaConfiguration(brokers: arguments[1]),
            groupID: arguments[2],
            topics: [arguments[3]]
        )
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .seconds(1)
        configuration.commitInterval = .milliseconds(100)
        let output = open(arguments[4], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard output >= 0 else {
            say("cannot open \(arguments[4])", to: 2)
            exit(1)
        }
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let worker = Worker(consumer: consumer, output: output)
        let group = ServiceGroup(
            services: [consumer, worker],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
    }
}

struct Worker: Service {
    let consumer: KafkaConsumer
    let output: Int32

    func run() async throws {
        // Stop taking messages on SIGTERM; the consumer (shut down after this service) then commits and leaves.
        for try await message in self.consumer.messages.cancelOnGracefulShutdown() {
            let line = Array("\(message.partition) ".utf8) + message.value + [0x0A]
            for descriptor in [1, self.output] {
                let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                precondition(written == line.count, "short write")
            }
            self.consumer.markProcessed(message)
        }
    }
}

/// Writes a line straight to a file descriptor (no stdio buffering: the test reads it through a pipe).
func say(_ text: String, to descriptor: Int32) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}
