import MarqueeTestSupport
import Testing

/// The completion scripts come from each executable's argument parser, so they name every subcommand and flag.
@Suite(.enabled(if: TestEnvironment.isIntegrationEnabled))
struct CompletionScriptTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func marqueeCompletesEverySubcommandAndItsFlags(shell: String) async throws {
        let run = try await runBuiltExecutable("marquee", ["--generate-completion-script", shell])
        #expect(run.status == 0, "\(run.standardError)")
        let words = [
            "enqueue", "topics", "lag", "dlq", "replay", "purge", "dashboard", "status", "drain", "query", "--max-lag",
            "--watch", "tmdb-list", "kofic-weekly", "openlibrary-work", "--dry-run", "--file",
            "--pipeline-only", "--topic-prefix",
        ]
        for word in words {
            // fish names long flags without their dashes (`'dry-run'`).
            let written = shell == "fish" && word.hasPrefix("--") ? "'\(word.dropFirst(2))" : word
            #expect(run.standardOutput.contains(written), "the \(shell) script completes \(word)")
        }
    }

    @Test(arguments: ["marquee-fetch", "marquee-images", "marquee-index", "marquee-upstream"])
    func everyWorkerHasOne(program: String) async throws {
        let run = try await runBuiltExecutable(program, ["--generate-completion-script", "bash"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("--help"))
        #expect(run.standardOutput.contains(program == "marquee-upstream" ? "--movies" : "--brokers"))
    }
}
