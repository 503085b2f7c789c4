import ArgumentParser
import MarqueeOperations
import MarqueeSettings
import MarqueeWorker

import class Foundation.ProcessInfo

/// The settings of a subcommand that does not talk to Kafka (`status`, `query`, `sources`): the settings file and
/// `--print-config`, resolved as ``KafkaOptions`` resolves them.
struct SettingsOptions: ParsableArguments, Sendable {
    @OptionGroup var config: ConfigFileOptions

    func validate() throws {
        let settings = try self.config.settings(executable: "marquee", flags: [:], catalogue: Catalogue.marquee)
        try checkLayout(settings)
    }

    /// The settings from the environment, the settings file and the defaults, with `flags` over them (checked by
    /// `validate()`).
    func settings(flags: [String: String] = [:]) -> Settings {
        (try? Settings(
            flags: flags,
            environment: ProcessInfo.processInfo.environment,
            settingsFile: self.config.settingsFile
        ))
            ?? Settings.defaults
    }

    /// The pipeline's stages, topics, groups and worker addresses.
    func layout() throws -> PipelineLayout {
        do {
            return try PipelineLayout(source: self.settings())
        } catch {
            throw ValidationError(error.description)
        }
    }
}
