import ArgumentParser
import MarqueeDashboard
import MarqueeKafka
import MarqueeObservability
import MarqueeOperations
import MarqueeSettings
import MarqueeStore
import MarqueeWorker

/// `marquee dashboard`: the web page of lag, workers, dead letters and the store.
struct Dashboard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Serve a web page of the pipeline: lag, workers, dead letters and the store.",
        discussion: """
            One page that refreshes itself: per stage (fetch, images, records) the consumer lag in messages and in \
            seconds over the last hour as charts, the consume rate, the time to drain and the group's status (the \
            rules of `marquee lag`), retry tiers due vs. not yet due; each worker (ready or not and why, jobs in \
            flight, restarts seen): the members of the stages' consumer groups, asked at the address their client \
            id announces (MARQUEE_METRICS_ADVERTISED_ADDRESS), so pods an autoscaler adds appear by themselves, and \
            the addresses of MARQUEE_WORKERS if set; dead letters by stage, kind and error kind, the latest with \
            their errors and a page each (headers and payload); what the store holds and the latest items with \
            their thumbnails. Read-only: replay and purge stay in `marquee dlq`.

            The history behind the charts is sampled by the dashboard itself (every --interval, an hour kept in \
            memory), so it needs no Prometheus. JSON for scripts: /api/lag, /api/workers, /api/dlq, \
            /api/dlq/<stage>/<partition>/<offset>, /api/store.

            It answers only the Host names localhost, 127.0.0.1, [::1], the --address host and those of \
            --allowed-host (MARQUEE_DASHBOARD_ALLOWED_HOSTS); any other gets 421 Misdirected Request, so a web \
            page on another site cannot read it, dead letters included, through your browser (DNS rebinding). \
            It has no login of its own: to open it beyond this machine, put it behind a reverse proxy that \
            authenticates (basic auth, oauth2-proxy) and allow the name the proxy passes on (docs/dashboard.md).

            Examples:
              marquee dashboard                                 # http://127.0.0.1:8080/
              marquee dashboard --address 0.0.0.0:8080 --allowed-host 10.0.0.5
              marquee dashboard --interval 5s
              MARQUEE_GRAFANA_URL=http://grafana:3000/d/marquee-pipeline marquee dashboard
              marquee dashboard --store postgres://marquee@127.0.0.1:15432/marquee --image-store file://./var/images
            """
    )

    @OptionGroup var kafka: KafkaOptions

    @Option(
        name: .long,
        help: ArgumentHelp("Where to listen: host:port (port 0: any free port).", valueName: "host:port")
    )
    var address = "127.0.0.1:8080"

    @Option(name: .long, help: ArgumentHelp(Catalogue.store, valueName: "location"))
    var store: String?

    @Option(
        name: .customLong("image-store"),
        help: ArgumentHelp(Catalogue.imageStore, more: "The thumbnails come from it.", valueName: "location")
    )
    var imageStore: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Time between samples of lag, workers and dead letters: 5s, 10s, 1m (a bare number is seconds).",
            valueName: "duration"
        )
    )
    var interval = IntervalArgument(duration: .seconds(10))

    @Option(name: .long, help: "Samples a group's status is judged over (as marquee lag --samples).")
    var samples = 6

    @Option(name: .long, help: "Samples kept for the charts (default: an hour at the interval).")
    var history: Int?

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(Catalogue.dashboardAllowedHosts, more: "Repeatable.", valueName: "name")
    )
    var allowedHosts: [String] = []

    @Option(name: .customLong("grafana-url"), help: ArgumentHelp(Catalogue.grafanaURL))
    var grafanaURL: String?

    @Option(name: .long, help: ArgumentHelp(Catalogue.dlqReaderGroup, valueName: "group"))
    var readerGroup: String?

    /// This subcommand's own flags, by setting name.
    var flags: [String: String] {
        Settings.flags([
            (Catalogue.store, self.store), (Catalogue.imageStore, self.imageStore),
            (
                Catalogue.dashboardAllowedHosts,
                self.allowedHosts.isEmpty ? nil : self.allowedHosts.joined(separator: ",")
            ),
            (Catalogue.grafanaURL, self.grafanaURL), (Catalogue.dlqReaderGroup, self.readerGroup),
        ])
    }

    func validate() throws {
        _ = try self.hostAndPort()
        guard self.samples >= 1 else { throw ValidationError("--samples must be at least 1") }
        if let history = self.history, history < 2 { throw ValidationError("--history must be at least 2") }
        guard self.interval.duration >= .milliseconds(100) else {
            throw ValidationError("--interval must be at least 100ms")
        }
        try WorkerOptions.validate(flags: self.flags, of: Catalogue.marquee)
        do {
            _ = try HostAllowList.dashboard.adding(self.allowedHosts)
        } catch {
            throw ValidationError("--allowed-host (MARQUEE_DASHBOARD_ALLOWED_HOSTS): \(error)")
        }
        let settings = self.kafka.settings(more: self.flags)
        try ConfigFileOptions.exitingOnSettingError(executable: "marquee") { () throws(SettingError) in
            _ = try settings.value(Catalogue.dashboardAllowedHosts) { try HostAllowList.dashboard.adding($0) }
            _ = try settings.value(Catalogue.store) { try StoreLocation(parsing: $0) }
        }
    }

    func run() async throws {
        let settings = self.kafka.settings(more: self.flags)
        var layout = try self.kafka.layout()
        // Without MARQUEE_WORKERS the workers are the groups' members alone: the layout's default addresses (one
        // worker of each stage on this machine) would be shown unreachable wherever the workers run elsewhere.
        if (try? settings.text(of: Catalogue.workers)) == nil {
            for index in layout.stages.indices { layout.stages[index].workers = [] }
        }
        var configuration = DashboardConfiguration(layout: layout, kafka: self.kafka.configuration)
        try ConfigFileOptions.exitingOnSettingError(executable: "marquee") { () throws(SettingError) in
            configuration.store = try settings.value(Catalogue.store) { try StoreLocation(parsing: $0) }
            configuration.imageStore = try settings.value(Catalogue.imageStore)
            // The S3 image store's credentials and region, with their `_FILE` forms read.
            configuration.environment = try settings.texts(Catalogue.aws)
            // Whose positions mark purged letters, as `marquee dlq`.
            configuration.deadLetterReaderGroup = try settings.value(Catalogue.dlqReaderGroup)
            let grafana = try settings.value(Catalogue.grafanaURL)
            configuration.grafanaURL = grafana.isEmpty ? nil : grafana
            configuration.allowedHosts = try settings.value(Catalogue.dashboardAllowedHosts)
        }
        configuration.sampleInterval = self.interval.duration
        configuration.statusSamples = self.samples
        let seconds = max(
            0.1,
            Double(self.interval.duration.components.seconds)
                + Double(self.interval.duration.components.attoseconds) / 1e18
        )
        configuration.historyCapacity = self.history ?? max(2, Int((3600 / seconds).rounded(.up)))
        configuration.requestTimeout = .seconds(self.kafka.timeout)
        let (host, port) = try self.hostAndPort()
        let dashboard: MarqueeDashboard.Dashboard
        do {
            dashboard = try MarqueeDashboard.Dashboard(configuration: configuration, logger: self.kafka.logger)
        } catch {
            throw fail("\(error)", code: ExitStatus.configuration.exitCode)
        }
        do {
            let names = dashboard.allowedHosts.adding(bindAddress: host).entries
            try await dashboard.serve(host: host, port: port) { port in
                var standardError = StandardError()
                let shown = host.contains(":") ? "[\(host)]" : host
                print("marquee dashboard: serving http://\(shown):\(port)/ (Ctrl-C to stop)", to: &standardError)
                print(
                    "marquee dashboard: answering Host \(names.joined(separator: ", ")) (more with --allowed-host)",
                    to: &standardError
                )
            }
        } catch {
            await dashboard.close()
            throw fail("cannot serve on \(self.address): \(error)", code: ExitStatus.unavailable.exitCode)
        }
        await dashboard.close()
    }

    func hostAndPort() throws -> (String, Int) {
        guard let colon = self.address.lastIndex(of: ":"),
            let port = Int(self.address[self.address.index(after: colon)...]), (0...65535).contains(port),
            colon > self.address.startIndex
        else { throw ValidationError("--address \(self.address): expected host:port, e.g. 127.0.0.1:8080") }
        var host = String(self.address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

}
