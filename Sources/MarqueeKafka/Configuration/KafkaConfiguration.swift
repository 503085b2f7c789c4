/// Settings every Marquee Kafka client shares: where the brokers are, how to reach them, and raw librdkafka
/// properties for anything not typed here (SASL, TLS, tuning).
public struct KafkaConfiguration: Sendable {
    /// The bootstrap brokers, as `host:port`.
    public var bootstrapServers: [String]

    /// The client id the broker sees in its logs and quotas.
    ///
    /// Default: `marquee`.
    public var clientID: String = "marquee"

    /// How long a client may go without reaching any broker before an operation that needs one fails with
    /// ``KafkaError/Code-swift.struct/brokerUnreachable``.
    ///
    /// Default: 10 seconds.
    public var connectTimeout: Duration = .seconds(10)

    /// How often librdkafka emits its statistics JSON (see ``KafkaProducer/statistics`` and
    /// ``KafkaConsumer/statistics``); `nil` turns statistics off.
    ///
    /// Default: `nil`.
    public var statisticsInterval: Duration? = nil

    /// Any librdkafka property, passed through as is (for example `security.protocol`, `sasl.mechanism`,
    /// `sasl.username`, `ssl.ca.location`). These override the typed settings.
    ///
    /// Default: empty.
    public var additionalProperties: [String: String] = [:]

    /// Creates a configuration for the given bootstrap brokers.
    ///
    /// - Parameter bootstrapServers: `host:port` of one or more brokers.
    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }

    /// Creates a configuration from a comma-separated broker list, as in `MARQUEE_BROKERS`.
    public init(brokers: String) {
        self.init(
            bootstrapServers: brokers.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        )
    }

    /// Checks what librdkafka would otherwise accept silently and fail on much later.
    ///
    /// - Throws: A ``KafkaError`` with code ``KafkaError/Code-swift.struct/configuration`` naming the bad value.
    public func validate() throws(KafkaError) {
        if self.bootstrapServers.isEmpty {
            throw .configuration("no bootstrap broker given (expected host:port, e.g. 127.0.0.1:19092)")
        }
        for server in self.bootstrapServers {
            let address = server.split(separator: "://", maxSplits: 1).last.map(String.init) ?? server
            guard let colon = address.lastIndex(of: ":"),
                !address[..<colon].isEmpty,
                let port = Int(address[address.index(after: colon)...]),
                (1...65535).contains(port)
            else {
                throw .configuration("bad broker address '\(server)': expected host:port with a port from 1 to 65535")
            }
        }
        if self.connectTimeout < .milliseconds(100) {
            throw .configuration("connectTimeout must be at least 100 ms")
        }
    }

    /// The librdkafka properties these settings stand for.
    var properties: [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": self.bootstrapServers.joined(separator: ","),
            "client.id": self.clientID,
            "socket.connection.setup.timeout.ms": String(self.connectTimeout.milliseconds),
            // Surface a broker that cannot be reached quickly instead of after librdkafka's long default backoff.
            "reconnect.backoff.max.ms": "1000",
            // Marquee creates its topics explicitly; a metadata request or a produce must never create one.
            "allow.auto.create.topics": "false",
            // On a network a peer can go silent without closing anything (a host cut off): a request on such a
            // connection fails after 10 s instead of 60, and librdkafka replaces the connection; keep-alives find
            // a dead peer on an idle one; a broker that moved is found within a minute (docs/deploy.md, "On a
            // real network").
            "socket.timeout.ms": "10000",
            "socket.keepalive.enable": "true",
            "metadata.max.age.ms": "60000",
        ]
        if let statisticsInterval = self.statisticsInterval {
            properties["statistics.interval.ms"] = String(max(statisticsInterval.milliseconds, 1))
        }
        return properties
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down, for the C calls that want it.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
