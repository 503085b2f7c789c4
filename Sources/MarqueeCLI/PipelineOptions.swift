import ArgumentParser
import MarqueeOperations

import class Foundation.ProcessInfo

/// Options of the subcommands that need the pipeline's layout (stages, topics, groups, worker addresses).
struct PipelineOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A settings file of MARQUEE_*=value lines (an .env file); the environment overrides it.",
            discussion: "Default: $MARQUEE_CONFIG, if set.",
            valueName: "file"
        )
    )
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Prefix of every topic name.", discussion: "Default: $MARQUEE_TOPIC_PREFIX, else marquee.")
    )
    var topicPrefix: String?

    /// The layout from the settings file, the environment and these flags.
    func layout() throws -> PipelineLayout {
        var environment = ProcessInfo.processInfo.environment
        if let prefix = self.topicPrefix { environment["MARQUEE_TOPIC_PREFIX"] = prefix }
        do {
            return try PipelineLayout.load(file: self.config, environment: environment)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
