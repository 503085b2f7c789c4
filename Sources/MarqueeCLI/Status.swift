import ArgumentParser
import Logging
import MarqueeHTTP
import MarqueeOperations

/// `marquee status`: each worker's readiness and key figures, from its `/readyz` and `/metrics`.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each worker's readiness and key figures (from its /readyz and /metrics).",
        discussion: """
            The workers' addresses come from MARQUEE_WORKERS (stage=host:port pairs, comma-separated; a stage may \
            be named once per worker), default fetch=127.0.0.1:9101,images=127.0.0.1:9102,records=127.0.0.1:9103 — \
            the workers' own defaults. A settings file (--config) may hold it too.

            READY is "ready", "not-ready" with the worker's reason (a dependency down, no partitions yet), or \
            "unreachable". The figures are the worker's own since it started: jobs in flight, partitions assigned \
            and paused, jobs succeeded, retried and dead-lettered, and the consumer lag it sees.

            Exit status: 0 when every worker is ready, 1 when any is not ready or unreachable (for scripts and \
            probes).

            Examples:
              marquee status
              MARQUEE_WORKERS=fetch=10.0.0.5:9101,fetch=10.0.0.6:9101,records=10.0.0.7:9103 marquee status
              marquee status --json | jq '.[] | select(.state != "ready")'
            """
    )

    @OptionGroup var settings: SettingsOptions

    @Option(help: "Seconds to wait for each worker.")
    var timeout = 3

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard self.timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() async throws {
        let layout = try self.settings.layout()
        let workers = layout.stages.flatMap { stage in stage.workers.map { (stage.name, $0) } }
        guard !workers.isEmpty else {
            throw ValidationError("no worker addresses: set MARQUEE_WORKERS, e.g. fetch=127.0.0.1:9101")
        }
        var configuration = HTTPFetcherConfiguration()
        configuration.connectTimeout = .seconds(self.timeout)
        configuration.totalTimeout = .seconds(self.timeout)
        configuration.allowsPrivateAddresses = true
        configuration.prefersHTTP2 = false
        var logger = Logger(label: "marquee")
        logger.logLevel = .critical
        let fetcher = try HTTPFetcher(configuration: configuration, logger: logger)
        let statuses = await withTaskGroup(of: (Int, WorkerStatus).self) { group in
            for (index, (stage, address)) in workers.enumerated() {
                group.addTask { (index, await WorkerStatus.probe(stage: stage, address: address, using: fetcher)) }
            }
            var statuses: [(Int, WorkerStatus)] = []
            for await status in group { statuses.append(status) }
            return statuses.sorted { $0.0 < $1.0 }.map(\.1)
        }
        await fetcher.shutdown()

        if self.json {
            try printJSON(statuses)
        } else {
            print(WorkerStatus.table(statuses))
        }
        if statuses.contains(where: { $0.state != .ready }) { throw ExitCode.failure }
    }
}
