public import ArgumentParser
public import MarqueeSettings

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.ProcessInfo

/// `--config` and `--print-config`: the two options every Marquee executable and subcommand takes beside its
/// settings' own flags.
public struct ConfigFileOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "A settings file of NAME=value lines (an .env file): below flags and the environment, above the defaults.",
            discussion: "Default: $MARQUEE_CONFIG, if set.",
            valueName: "file"
        )
    )
    public var settingsFile: String?

    @Flag(help: "Print the effective settings, each with where it came from (secrets redacted), and exit.")
    public var printConfig = false

    public init() {}

    /// The settings from `flags`, the environment, the settings file and the defaults, for an executable's run.
    ///
    /// With `--print-config`, prints `catalogue`'s settings and exits 0. A malformed setting of `catalogue`, or an
    /// unreadable settings file, exits with status 78 (EX_CONFIG) and one line saying which.
    public func settings(
        executable: String,
        flags: [String: String],
        catalogue: [any AnySetting],
        environment: [String: String]? = nil
    ) throws -> Settings {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let settings = try Self.exitingOnSettingError(executable: executable) { () throws(SettingError) -> Settings in
            try Settings(flags: flags, environment: environment, settingsFile: self.settingsFile)
        }
        if self.printConfig {
            print(
                try Self.exitingOnSettingError(executable: executable) { () throws(SettingError) in
                    try settings.printed(catalogue)
                }
            )
            throw ExitCode.success
        }
        try Self.exitingOnSettingError(executable: executable) { () throws(SettingError) in
            try settings.validate(catalogue)
        }
        return settings
    }

    /// Runs `body`; a ``SettingError`` becomes one line on standard error, `executable: what`, and exit status 78.
    public static func exitingOnSettingError<T>(executable: String, _ body: () throws(SettingError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            FileHandle.standardError.write(Data("\(executable): \(error.description)\n".utf8))
            throw ExitStatus.configuration.exitCode
        }
    }
}
