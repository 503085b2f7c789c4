import ArgumentParser
import Logging
import MarqueeKafka
import MarqueeOperations
import MarqueeSettings
import MarqueeWorker

import class Foundation.ProcessInfo

/// Options every subcommand that talks to Kafka shares: the settings file, the cluster, the topic prefix.
///
/// Each setting is one of ``Catalogue``: a flag here, else its environment variable, else the settings file
/// (`--config`, else `MARQUEE_CONFIG`), else its default. `validate()` resolves them all before the command runs:
/// `--print-config` prints them and exits; a malformed one exits with status 78 and one line saying which.
struct KafkaOptions: ParsableArguments {
    @OptionGroup var config: ConfigFileOptions

    @Option(help: ArgumentHelp(Catalogue.brokers))
    var brokers: String?

    @Option(help: ArgumentHelp(Catalogue.topicPrefix))
    var topicPrefix: String?

    @Option(name: .customLong("timeout"), help: "Seconds to wait for a broker before giving up (default: 10).")
    var timeoutSeconds: Int = 10

    @Option(
        name: [.customShort("X"), .customLong("kafka-property")],
        help: ArgumentHelp(Catalogue.kafkaProperties, more: "Repeatable.")
    )
    var kafkaProperties: [String] = []

    @Flag(name: .long, help: "Log the Kafka client's own lines (connections, group membership) to standard error.")
    var verbose = false

    /// The flags given, by setting name.
    var flags: [String: String] {
        Settings.flags([(Catalogue.brokers, self.brokers), (Catalogue.topicPrefix, self.topicPrefix)])
    }

    func validate() throws {
        guard self.timeoutSeconds > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.marquee)
        _ = try WorkerOptions.parseKafkaProperties(self.kafkaProperties)
        let settings = try self.config.settings(executable: "marquee", flags: self.flags, catalogue: Catalogue.marquee)
        try checkLayout(settings)
    }

    /// The settings from the flags (these and a subcommand's own, `more`), the environment, the settings file and
    /// the defaults (checked by `validate()`).
    func settings(more: [String: String] = [:]) -> Settings {
        let flags = self.flags.merging(more) { ours, _ in ours }
        return
            (try? Settings(
                flags: flags,
                environment: ProcessInfo.processInfo.environment,
                settingsFile: self.config.settingsFile
            ))
            ?? Settings.defaults
    }

    /// Seconds to wait for a broker.
    var timeout: Int { self.timeoutSeconds }

    var configuration: KafkaConfiguration {
        let settings = self.settings()
        var configuration = KafkaConfiguration(
            brokers: (try? settings.value(Catalogue.brokers)) ?? Catalogue.brokers.defaultValue
        )
        configuration.clientID = "marquee-cli"
        configuration.connectTimeout = .seconds(self.timeoutSeconds)
        // `MARQUEE_KAFKA_PROPERTIES` with the `-X` flags over it, as the workers take them; checked by `validate()`.
        let flagProperties = (try? WorkerOptions.parseKafkaProperties(self.kafkaProperties)) ?? [:]
        configuration.additionalProperties =
            ((try? settings.value(Catalogue.kafkaProperties)) ?? [:]).merging(flagProperties) { _, flag in flag }
        return configuration
    }

    /// The pipeline's stages, topics, groups and worker addresses (checked by `validate()`).
    func layout() throws -> PipelineLayout {
        do {
            return try PipelineLayout(source: self.settings())
        } catch {
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

/// Refuses a layout the settings cannot make (such as a malformed `MARQUEE_WORKERS`): one line, exit status 78.
func checkLayout(_ settings: Settings) throws {
    do {
        _ = try PipelineLayout(source: settings)
    } catch {
        throw fail(error.description, status: .configuration)
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
    /// Exits with the error's reason (no stack trace, no internals) and its ``ExitStatus``.
    var exit: ExitCode { fail(self.reason, status: ExitStatus(self)) }
}

/// Prints `marquee: message` on standard error and returns `code` to throw: how every subcommand fails.
func fail(_ message: String, code: ExitCode) -> ExitCode {
    var standardError = StandardError()
    print("marquee: \(message)", to: &standardError)
    return code
}

/// ``fail(_:code:)`` with a status of the table (``ExitStatus``).
func fail(_ message: String, status: ExitStatus) -> ExitCode {
    fail(message, code: status.exitCode)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleOutput.standardError(string)
    }
}
