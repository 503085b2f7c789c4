import ArgumentParser
import MarqueeLimits
import MarqueeStore

/// `marquee sources`: each upstream source's shared limit, pace, budget and pause, as the fetch workers record
/// them in the store (docs/operating.md). The report is ``SourcesReport``; this reads the store and prints it.
struct Sources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Each upstream source's limit, the pipeline's pace, each worker's share, 429s, budget and pause.",
        discussion: """
            Reads what the fetch workers share through the store (--store, else $MARQUEE_STORE, else \
            sqlite:./var/marquee.db): one row per source, key and upstream host with the configured limit \
            (requests/s for the whole pipeline), the pace the live workers keep now, the slow-down factor after \
            429s, the 429s of the last minute, today's budget left and when it resets, and the state: paused \
            (for the pipeline, until a probe succeeds), budget spent, blocked (the upstream's Retry-After), \
            running or idle. Then each worker's share of its source's pace, and for each paused source why, \
            since when, by which worker and when the next probe runs.

            Nothing recorded yet is not an error: a message on standard error (tables) or a document with no \
            sources (JSON), exit 0. A store that cannot be read exits 1.

            Examples:
              marquee sources
              marquee sources --json | jq '.sources[] | select(.paused) | {source, reason: .pause.reason}'
              marquee sources --store postgres://marquee@127.0.0.1:15432/marquee
            """
    )

    @OptionGroup var options: QueryOptions

    func run() async throws {
        let options = self.options
        try await options.withStore { store in
            let report = SourcesReport(snapshot: try await store.coordinationSnapshot())
            if options.json { return try options.printJSON(report) }
            guard !report.isEmpty else { return options.nothingFound(report.text()) }
            print(report.text())
        }
    }
}
