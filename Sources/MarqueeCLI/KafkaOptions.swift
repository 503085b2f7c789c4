import ArgumentParser
import Logging
import MarqueeKafka
import MarqueeSettings
import MarqueeWorker

import class Foundation.ProcessInfo

/// Options every subcommand that talks to Kafka shares.
struct KafkaOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Bootstrap brokers, comma-separated host:port.",
            discussion: "Default: $MARQUEE_BROKERS, else 127.0.0.1:19092."
        )
    )
    var brokers: String = ProcessInfo.processInfo.environment["MARQUEE_BROKERS"] ?? "127.0.0.1:19092"

    @Option(name: .long, help: "Seconds to wait for a broker before giving up.")
    var timeout: Int = 10

    @Option(name: [.customShort("X"), .customLong("kafka-property")], help: ArgumentHelp(Catalogue.kafkaProperties, more: "Repeatable."))
    var kafkaProperties: [String] = []

    @Flag(name: .long, help: "Log the Kafka client's own lines (connections, group membership) to standard error.")
    var verbose = false

    func validate() throws {
        guard self.timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
        _ = try self.resolvedProperties()
    }

    var configuration: KafkaConfiguration {
        var configuration = KafkaConfiguration(brokers: self.brokers)
        configuration.clientID = "marquee-cli"
        configuration.connectTimeout = .seconds(self.timeout)
        // Checked by `validate()`.
        configuration.additionalProperties = (try? self.resolvedProperties()) ?? [:]
        return configuration
    }

    /// `MARQUEE_KAFKA_PROPERTIES` (or the file `MARQUEE_KAFKA_PROPERTIES_FILE` names) with the `-X` flags over it,
    /// as the workers take them.
    func resolvedProperties() throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != Settings.fileVariable }
        do {
            let fromEnvironment = try Settings(environment: environment).value(Catalogue.kafkaProperties)
            return fromEnvironment.merging(try WorkerOptions.parseKafkaProperties(self.kafkaProperties)) { _, flag in flag }
        } catch let error as SettingError {
            throw ValidationError(error.description)
        }
    }

    /// An admin client whose requests wait at most `--timeout`.
    func makeAdmin() throws(KafkaError) -> KafkaAdmin {
        try KafkaAdmin(configuration: self.configuration, requestTimeout: .seconds(self.timeout), logger: self.logger)
    }

    var logger: Logger {
        var logger = Logger(label: "marquee")
        // Failures reach the operator as one line on exit; librdkafka's own lines only with --verbose.
        logger.logLevel = self.verbose ? .debug : .critical
        return logger
    }
}

/// Runs a command's body; a ``KafkaError`` becomes its reason on standard error and a non-zero exit.
func reportingKafkaErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as KafkaError {
        throw error.exit
    }
}

extension KafkaError {
    /// Exits with the error's reason (no stack trace, no internals).
    var exit: ExitCode {
        var standardError = StandardError()
        print("marquee: \(self.reason)", to: &standardError)
        switch self.code {
        case .configuration: return ExitCode.validationFailure
        case .brokerUnreachable: return ExitCode(69)  // EX_UNAVAILABLE
        default: return ExitCode.failure
        }
    }
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleOutput.standardError(string)
    }
}
