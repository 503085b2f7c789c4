import Foundation
import Logging
import MarqueeFetchStage
import MarqueeHTTP
import MarqueeStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The shared validator cache never holds a job for long: a store that does not answer is "no validators".
@Suite(.timeLimit(.minutes(1)))
struct StoreValidatorCacheTests {
    /// The store's own deadline is an hour here: only the cache's bound lets these tests end within their limit.
    func unansweringStore(_ listener: BlackHoleListener) throws -> Store {
        try Store.open(
            try StoreLocation(parsing: "postgres://marquee@127.0.0.1:\(listener.port)/marquee?sslmode=disable"),
            maximumConnections: 2,
            timeout: .seconds(3600),
            logger: Logger(label: "test")
        )
    }

    @Test func aStoreThatNeverAnswersCountsAsNoValidatorsAndIsNotAskedAgainUntilTheRetryInterval() async throws {
        let listener = try BlackHoleListener()
        let store = try self.unansweringStore(listener)
        let cache = StoreValidatorCache(
            store: store,
            answerTimeout: .milliseconds(300),
            retryInterval: .seconds(600),
            logger: Logger(label: "test")
        )

        #expect(await cache.validators(for: "https://api.themoviedb.org/3/movie/1") == nil)
        #expect(cache.storeCallCount == 1)
        // Failing: the next calls answer at once, without the store.
        for id in 2...6 {
            #expect(await cache.validators(for: "https://api.themoviedb.org/3/movie/\(id)") == nil)
        }
        await cache.store(
            HTTPValidators(etag: "\"v1\"", lastModified: nil),
            for: "https://api.themoviedb.org/3/movie/1"
        )
        #expect(cache.storeCallCount == 1, "while the store fails, one call a retry interval tries it")
        await store.close()
    }

    @Test func afterTheRetryIntervalOneCallTriesTheStoreAgain() async throws {
        let listener = try BlackHoleListener()
        let store = try self.unansweringStore(listener)
        let cache = StoreValidatorCache(
            store: store,
            answerTimeout: .milliseconds(200),
            retryInterval: .seconds(3),
            logger: Logger(label: "test")
        )

        #expect(await cache.validators(for: "a") == nil)
        #expect(await cache.validators(for: "b") == nil)  // at once: well within the retry interval
        #expect(cache.storeCallCount == 1)
        try await Task.sleep(for: .milliseconds(3500))  // the retry interval passes
        #expect(await cache.validators(for: "c") == nil)
        #expect(cache.storeCallCount == 2)
        await store.close()
    }

    @Test func aCancelledJobStopsWaitingForTheStore() async throws {
        let listener = try BlackHoleListener()
        let store = try self.unansweringStore(listener)
        // Only cancellation can end this wait within the test's limit.
        let cache = StoreValidatorCache(store: store, answerTimeout: .seconds(3600), logger: Logger(label: "test"))
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let job = Task {
            startedContinuation.yield()
            return await cache.validators(for: "https://api.themoviedb.org/3/movie/1")
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        job.cancel()
        #expect(await job.value == nil)
        #expect(cache.storeCallCount == 1)
        await store.close()
    }

    @Test func aWorkingStoreKeepsAndReturnsValidators() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("validators-\(UUID().uuidString).db")
            .path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: Logger(label: "test"))
        // A generous bound: the first call migrates the schema, which a loaded machine (CI, every suite in
        // parallel) can take seconds over; this test is about the answers, not the bound.
        let cache = StoreValidatorCache(store: store, answerTimeout: .seconds(50), logger: Logger(label: "test"))
        let url = "https://api.themoviedb.org/3/movie/550?language=ko-KR"
        #expect(await cache.validators(for: url) == nil)
        await cache.store(HTTPValidators(etag: "W/\"550\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT"), for: url)
        #expect(
            await cache.validators(for: url)
                == HTTPValidators(etag: "W/\"550\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT")
        )
        #expect(cache.storeCallCount == 3)
        await store.close()
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes each connection, and nothing ever answers
/// on it (a PostgreSQL server frozen mid-handshake, as far as a client can tell).
final class BlackHoleListener: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(self.descriptor) }
}
