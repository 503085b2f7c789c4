import Hummingbird
import HummingbirdTesting
import Logging
import MarqueeObservability
import MarqueeTestSupport
import NIOCore
import Synchronization
import Testing

// A guard against a hang: each test makes a few dozen requests, seconds alone but up to a minute in the whole
// suite's run on two cores.
/// The observability listener over real loopback: the `Host` names it answers and its `/readyz` text.
@Suite(.timeLimit(.minutes(3)))
struct ObservabilityServerTests {
    /// Runs an ``ObservabilityServer`` on a free loopback port for `body`, then stops it.
    func withServer(
        allowedHosts: HostAllowList? = nil,
        readiness: @escaping @Sendable () -> ObservabilityServer.Readiness = { .ready },
        _ body: (Int) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let ports = AsyncStream<Int>.makeStream()
        let server = ObservabilityServer(
            host: "127.0.0.1",
            port: 0,
            allowedHosts: allowedHosts,
            metrics: { "marquee_test_total 1\n" },
            readiness: readiness,
            logger: logger
        ) { ports.continuation.yield($0) }
        try await withRunningService(server, logger: logger) {
            var iterator = ports.stream.makeAsyncIterator()
            try await body(try #require(await iterator.next()))
        }
    }

    /// `GET path` on `port` with `Host: host` (none for `nil`) and any further header fields.
    func get(_ path: String, port: Int, host: String?, headers: HTTPFields = [:]) async throws -> (Int, String) {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            let response = try await client.execute(.init(path, method: .get, authority: host, headers: headers))
            return (response.status.code, response.body.map { String(buffer: $0) } ?? "")
        }
    }

    @Test func anotherSitesNameIsRefusedAndTheDefaultNamesAreAnswered() async throws {
        try await self.withServer { port in
            for path in ["/metrics", "/readyz", "/healthz", "/nothing"] {
                let (status, body) = try await self.get(path, port: port, host: "evil.example:\(port)")
                #expect(status == 421, "\(path)")
                #expect(
                    body.hasPrefix("misdirected request: this server does not answer for Host 'evil.example:\(port)'"),
                    "\(body)"
                )
                #expect(body.contains("MARQUEE_METRICS_ALLOWED_HOSTS"))
                #expect(!body.contains("marquee_test_total"))
            }
            for host in [
                "127.0.0.1:\(port)", "localhost:\(port)", "10.42.0.17:\(port)", "[fd00::17]:\(port)",
                "marquee-fetch:\(port)",
            ] {
                let (status, body) = try await self.get("/metrics", port: port, host: host)
                #expect(status == 200, "\(host)")
                #expect(body == "marquee_test_total 1\n", "\(host)")
            }
            #expect(try await self.get("/healthz", port: port, host: nil).0 == 200, "no Host: not a browser")
        }
    }

    @Test func aSecondHostHeaderIsRefused() async throws {
        try await self.withServer { port in
            let (status, body) = try await self.get(
                "/metrics",
                port: port,
                host: "127.0.0.1:\(port)",
                headers: [.init("Host")!: "evil.example"]
            )
            #expect(status == 421)
            #expect(body.contains("(sent twice)"), "\(body)")
        }
    }

    @Test func namesWithADotAreAnsweredOnceAllowed() async throws {
        let allowed = try HostAllowList.observability.adding(["marquee-fetch.marquee.svc"])
        try await self.withServer(allowedHosts: allowed) { (port: Int) async throws in
            #expect(try await self.get("/healthz", port: port, host: "marquee-fetch.marquee.svc:\(port)").0 == 200)
            #expect(try await self.get("/healthz", port: port, host: "other.marquee.svc:\(port)").0 == 421)
        }
    }

    @Test func readyzSaysWhyInPlainText() async throws {
        let ready = Mutex(false)
        try await self.withServer(readiness: {
            ready.withLock { $0 } ? .ready : .notReady("the store is down: \"x\"\nrefused")
        }) { port in
            let (status, body) = try await self.get("/readyz", port: port, host: "127.0.0.1:\(port)")
            #expect(status == 503)
            #expect(body == "the store is down: \"x\"\nrefused\n", "the reason as it is, not a JSON error")
            ready.withLock { $0 = true }
            #expect(try await self.get("/readyz", port: port, host: "127.0.0.1:\(port)") == (200, "ready\n"))
        }
    }
}
