import Hummingbird
import HummingbirdTesting
import Logging
import MarqueeDashboard
import MarqueeKafka
import MarqueeObservability
import MarqueeOperations
import MarqueeTestSupport
import NIOCore
import ServiceLifecycle
import Testing

// A guard against a hang: each test makes a few dozen requests, seconds alone but up to a minute in the whole
// suite's run on two cores.
/// The dashboard over real loopback answers only its `Host` names: a page on another site whose name points at
/// the dashboard's address (DNS rebinding) reads nothing, dead letters included.
@Suite(.timeLimit(.minutes(3)))
struct DashboardHostTests {
    func dashboard(allowedHosts: [String] = []) throws -> Dashboard {
        var configuration = DashboardConfiguration(
            layout: try PipelineLayout(settings: ["MARQUEE_WORKERS": "fetch=127.0.0.1:1"]),
            kafka: KafkaConfiguration(brokers: "127.0.0.1:1")
        )
        configuration.requestTimeout = .seconds(1)
        configuration.allowedHosts = allowedHosts
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try Dashboard(configuration: configuration, logger: logger)
    }

    /// Serves `dashboard`'s routes (without the sampler) on `address` and a free port for `body`.
    func serve(_ dashboard: Dashboard, on address: String, _ body: (Int) async throws -> Void) async throws {
        let ports = AsyncStream<Int>.makeStream()
        let application = dashboard.application(host: address, port: 0) { ports.continuation.yield($0) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        try await withRunningService(application, logger: logger) {
            var iterator = ports.stream.makeAsyncIterator()
            try await body(try #require(await iterator.next()))
        }
        await dashboard.close()
    }

    /// `GET path` on `address:port` with `Host: host`: the status and the body.
    func get(_ path: String, address: String, port: Int, host: String) async throws -> (Int, String) {
        try await TestClient.withClient(host: address, port: port) { client in
            let response = try await client.execute(.init(path, method: .get, authority: host))
            return (response.status.code, response.body.map { String(buffer: $0) } ?? "")
        }
    }

    @Test func anotherSitesNameIsRefusedAndTheLoopbackNamesAreAnswered() async throws {
        let dashboard = try self.dashboard()
        try await self.serve(dashboard, on: "127.0.0.1") { port in
            for path in ["/", "/api/dlq", "/api/workers", "/dlq/fetch/0/0", "/api/store", "/nothing"] {
                let (status, body) = try await self.get(
                    path,
                    address: "127.0.0.1",
                    port: port,
                    host: "evil.example:\(port)"
                )
                #expect(status == 421, "\(path)")
                #expect(
                    body.hasPrefix("misdirected request: this server does not answer for Host 'evil.example:\(port)'"),
                    "\(body)"
                )
                #expect(body.contains("--allowed-host"))
            }
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"] {
                let (status, body) = try await self.get("/", address: "127.0.0.1", port: port, host: host)
                #expect(status == 200, "\(host)")
                #expect(body.hasPrefix("<!doctype html>"), "\(host)")
            }
            // Not another loopback or private address, nor a name without a dot: only the names it was given.
            for host in ["10.0.0.5:\(port)", "marquee-dashboard:\(port)"] {
                #expect(try await self.get("/", address: "127.0.0.1", port: port, host: host).0 == 421, "\(host)")
            }
            // The health probe says nothing else, whatever the name.
            #expect(
                try await self.get("/healthz", address: "127.0.0.1", port: port, host: "evil.example") == (200, "ok\n")
            )
        }
    }

    @Test func theBindAddressAndAllowedNamesAreAnswered() async throws {
        let dashboard = try self.dashboard(allowedHosts: ["dash.example.org", ".corp.example"])
        // 127.0.0.2 is loopback on Linux, but not one of the default names: only the bind address makes it one.
        try await self.serve(dashboard, on: "127.0.0.2") { (port: Int) async throws in
            for host in ["127.0.0.2:\(port)", "dash.example.org", "dash.example.org:443", "ops.corp.example:\(port)"] {
                #expect(
                    try await self.get("/api/lag", address: "127.0.0.2", port: port, host: host).0 == 200,
                    "\(host)"
                )
            }
            #expect(
                try await self.get("/api/lag", address: "127.0.0.2", port: port, host: "dash.example.org.evil.example")
                    .0 == 421
            )
        }
    }

    @Test func anAllowedHostThatIsNoNameIsRefusedAtStart() throws {
        #expect {
            _ = try self.dashboard(allowedHosts: ["dash.example.org:8080"])
        } throws: { error in
            "\(error)".contains("'dash.example.org:8080' has a port")
        }
    }
}
