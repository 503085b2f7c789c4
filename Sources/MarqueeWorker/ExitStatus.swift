public import ArgumentParser
public import MarqueeKafka

/// The exit statuses of every Marquee executable and `marquee` subcommand: one cause, one status (sysexits.h).
/// docs/operating.md's table is ``markdownTable`` (a test keeps the two equal).
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case failure = 1
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case temporaryFailure = 75
    case protocolError = 76
    case configuration = 78

    /// What the status means, for the table.
    public var meaning: String {
        switch self {
        case .success: "done"
        case .failure:
            "a check failed (`status`: a worker not ready; `lag --max-lag`: over the limit; `drain`: not drained in time), the work was partly done (`dlq replay`/`purge`), or one of two sources could not be read (`job`: the store or the dead letters)"
        case .usage: "a malformed flag or argument (EX_USAGE); the usage follows"
        case .dataError:
            "bad input data: an invalid job line, a dead-letter or job id that is malformed or not found (EX_DATAERR)"
        case .noInput:
            "an input file that cannot be read, or a store that does not exist or holds no catalogue yet (EX_NOINPUT)"
        case .unavailable: "the broker or the store did not answer, or a listening address is taken (EX_UNAVAILABLE)"
        case .software: "a worker's shutdown watchdog ended it, or an internal error (EX_SOFTWARE)"
        case .temporaryFailure:
            "not now: the consumer group has members (`groups reset-offsets --execute`) (EX_TEMPFAIL)"
        case .protocolError: "the broker refused a request (EX_PROTOCOL)"
        case .configuration:
            "a malformed setting from the environment, a settings file or a secret file, or a schedule file that is invalid (EX_CONFIG)"
        }
    }

    public var exitCode: ExitCode { ExitCode(self.rawValue) }

    /// The status of a Kafka failure: a property librdkafka refused is a setting's fault; no broker reached
    /// (a delivery that timed out for want of one included) is unavailability; any other refusal is the broker's.
    public init(_ error: KafkaError) {
        switch error.code {
        case .configuration: self = .configuration
        case .closed, .cancelled: self = .failure
        case .unsupportedLibraryVersion: self = .software
        case _ where error.isRetriable: self = .unavailable
        default: self = .protocolError
        }
    }

    /// The table in docs/operating.md.
    public static var markdownTable: String {
        (["| status | meaning |", "|---|---|"] + Self.allCases.map { "| \($0.rawValue) | \($0.meaning) |" }).joined(
            separator: "\n"
        )
    }
}
