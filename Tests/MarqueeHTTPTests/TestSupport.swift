import Logging
import MarqueeHTTP
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Logger {
    /// The tests' logger, at `.info`.
    static let marqueeHTTPTest: Logger = {
        var logger = Logger(label: "marquee-http-test")
        logger.logLevel = .info
        return logger
    }()
}

/// A configuration for tests against the loopback server: private addresses allowed, 127.0.0.1 on the image
/// allowlist, short timeouts.
func testConfiguration(_ change: (inout HTTPFetcherConfiguration) -> Void = { _ in }) -> HTTPFetcherConfiguration {
    var configuration = HTTPFetcherConfiguration()
    configuration.allowsPrivateAddresses = true
    configuration.imageHostAllowlist = ["127.0.0.1"]
    configuration.connectTimeout = .seconds(5)
    configuration.totalTimeout = .seconds(20)
    change(&configuration)
    return configuration
}

/// Runs `body` with a fresh loopback server and fetcher; shuts both down afterwards.
func withFetcher<T>(
    _ configuration: HTTPFetcherConfiguration = testConfiguration(),
    validatorCache: (any ValidatorCache)? = nil,
    logger: Logger = .marqueeHTTPTest,
    _ body: (HTTPFetcher, TestHTTPServer) async throws -> T
) async throws -> T {
    let server = try await TestHTTPServer.start()
    let fetcher = try HTTPFetcher(configuration: configuration, validatorCache: validatorCache, logger: logger)
    do {
        let result = try await body(fetcher, server)
        await fetcher.shutdown()
        try await server.close()
        return result
    } catch {
        await fetcher.shutdown()
        try? await server.close()
        throw error
    }
}

/// Expects `body` to throw an ``HTTPFetchError`` and returns it.
func expectFetchError(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws(HTTPFetchError) -> FetchResponse
) async -> HTTPFetchError? {
    do {
        let response = try await body()
        Issue.record("expected an HTTPFetchError, got status \(response.status)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A listening TCP port on 127.0.0.1 whose accept queue is full, so a new connection's SYN is dropped and a
/// connect hangs until the client's timeout (Linux: a backlog of 0 holds one connection).
final class BlackholePort: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 0) == 0 else { throw SocketError() }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        var descriptors = [listener]
        for _ in 0..<3 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            descriptors.append(client)
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptors = descriptors
    }

    deinit { for descriptor in self.descriptors { close(descriptor) } }

    struct SocketError: Error {}
}

/// A TCP port on 127.0.0.1 that nothing listens on: 1 (tcpmux), which no server here uses. (A port found free,
/// bound and closed again was taken meanwhile by a server of a test running in parallel: "got status 404".)
func closedPort() throws -> Int { 1 }

/// A log handler that keeps every rendered line (message and metadata), at `.trace`.
struct CapturingLogHandler: LogHandler {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    let store: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = self.metadata.merging(event.metadata ?? [:]) { $1 }
        let line = "\(event.level) \(event.message) \(all)"
        self.store.lines.withLock { $0.append(line) }
    }
}

/// Expects `task` to fail with an ``HTTPFetchError`` and returns it.
func expectTaskError(
    _ task: Task<FetchResponse, any Error>,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> HTTPFetchError? {
    switch await task.result {
    case .success(let response):
        Issue.record("expected an HTTPFetchError, got status \(response.status)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error as HTTPFetchError):
        return error
    case .failure(let error):
        Issue.record("expected an HTTPFetchError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
