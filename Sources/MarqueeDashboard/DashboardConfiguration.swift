public import MarqueeKafka
public import MarqueeOperations
public import MarqueeStore

/// What `marquee dashboard` shows and where it finds it.
public struct DashboardConfiguration: Sendable {
    /// The pipeline's topics, groups and worker addresses (`MARQUEE_*`, ``PipelineLayout``). The workers shown are
    /// the members of the stages' groups (at the address each announces in its client id) and these addresses.
    public var layout: PipelineLayout
    /// The brokers the lag and dead letters are read from.
    public var kafka: KafkaConfiguration
    /// The catalogue store; `nil` leaves the store panel out.
    public var store: StoreLocation?
    /// The image store (`file://…` or `s3://…`) the thumbnails are served from; `nil` shows no thumbnails.
    public var imageStore: String?
    /// The environment the image store reads its credentials from (S3).
    public var environment: [String: String] = [:]
    /// Time between two samples of lag and workers. Default: 10 seconds.
    public var sampleInterval: Duration = .seconds(10)
    /// Samples kept for the charts (a bounded window in memory). Default: 360 (an hour at 10 s).
    public var historyCapacity = 360
    /// Samples a group's status is judged over, as `marquee lag --samples`. Default: 6 (a minute at 10 s).
    public var statusSamples = 6
    /// Unconsumed messages read per retry-tier partition for their not-before. Default: 10,000.
    public var scanLimit = 10_000
    /// How long one broker, store or worker request may take. Default: 10 seconds.
    public var requestTimeout: Duration = .seconds(10)
    /// The latest dead letters listed on the page. Default: 20.
    public var latestDeadLetters = 20
    /// The latest ingested items of each kind (movies, books) shown with their thumbnails. Default: 8.
    public var latestItems = 8
    /// A Grafana dashboard to link to (`MARQUEE_GRAFANA_URL`). Default: none.
    public var grafanaURL: String?
    /// `Host` names the dashboard answers besides `localhost`, `127.0.0.1`, `::1` and the address it listens on
    /// (`HostAllowList`: names, addresses, `.example.org` for every name under it, `*` for any). A request
    /// naming another host is refused with 421, so that a web page on another site cannot read the dashboard
    /// through a browser (DNS rebinding). Default: none.
    public var allowedHosts: [String] = []
    /// The reader group whose committed offsets mark purged dead letters (``DeadLetterQueue``).
    /// `nil`: ``DeadLetterQueue/defaultReaderGroup(prefix:)``.
    public var deadLetterReaderGroup: String?

    /// - Parameters:
    ///   - layout: The pipeline's layout.
    ///   - kafka: The brokers.
    public init(layout: PipelineLayout, kafka: KafkaConfiguration) {
        self.layout = layout
        self.kafka = kafka
    }

    /// The seconds a refreshing page waits between two refreshes: the sample interval, at least 2 seconds.
    var refreshSeconds: Int { max(2, Int(self.sampleInterval.components.seconds)) }
}
