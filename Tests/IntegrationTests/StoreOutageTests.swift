import Logging
import MarqueeCore
@_spi(Testing) import MarqueeStore
import MarqueeTestSupport
import Testing

/// A PostgreSQL server that stops answering (frozen: its connections stay open, nothing comes back) fails the
/// store's calls at their deadline instead of holding them for as long as TCP takes to notice.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StoreOutageTests {
    /// postgres-nio never answers a query written to a connection that has closed: a server restarted between
    /// two statements of a transaction once held its caller (and its deadline) for good.
    @Test func aServerRestartedInTheMiddleOfATransactionFailsItsNextStatement() async throws {
        let server = try await PostgresServerProcess.start()
        do {
            // An hour's deadline: only the closed connection's handling can end this within the time limit.
            let store = try Store.open(
                try StoreLocation(parsing: server.url),
                maximumConnections: 2,
                timeout: .seconds(3600),
                logger: .marqueeTest
            )
            _ = try await store.migrate()
            let error = await #expect(throws: StoreError.self) {
                try await answer(within: .seconds(60)) {
                    try await store.transaction("SELECT 1", then: { try await server.restart() }, "SELECT 2")
                }
            }
            #expect(error?.code == .unavailable)
            #expect(
                try await answer(within: .seconds(60)) { try await store.validators(for: "https://example.org/1") }
                    == nil,
                "the store works again"
            )
            let closed: Void? = try? await answer(within: .seconds(60)) { await store.close() }
            #expect(closed != nil, "the store closes")
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func aFrozenServerFailsReadsAndTransactionsAtTheDeadlineAndTheStoreWorksOnceItThaws() async throws {
        let server = try await PostgresServerProcess.start()
        do {
            // The schema through a store of its own with a generous deadline: a loaded machine (CI, every suite in
            // parallel) can take seconds over a migration.
            let setUp = try Store.open(
                try StoreLocation(parsing: server.url),
                maximumConnections: 1,
                timeout: .seconds(60),
                logger: .marqueeTest
            )
            _ = try await setUp.migrate()
            await setUp.close()
            // A deadline well above a one-row statement's time even under load; the frozen server passes it.
            let store = try Store.open(
                try StoreLocation(parsing: server.url),
                maximumConnections: 2,
                timeout: .seconds(8),
                logger: .marqueeTest
            )
            // Connections open.
            try await store.storeValidators(etag: "\"a\"", lastModified: nil, for: "https://example.org/1")
            server.freeze()
            // Without the deadline closing the connection, each of these waits on the frozen server for good (the
            // test's own bound, `answer(within:)`, turns that into NoAnswer: a failure, not a hang).
            let read = await #expect(throws: StoreError.self) {
                _ = try await answer(within: .seconds(30)) { try await store.validators(for: "https://example.org/1") }
            }
            #expect(read?.code == .unavailable)
            let write = await #expect(throws: StoreError.self) {
                try await answer(within: .seconds(30)) {
                    try await store.storeValidators(etag: "\"b\"", lastModified: nil, for: "https://example.org/1")
                }
            }
            #expect(write?.code == .unavailable)
            server.thaw()
            // The pool replaces the closed connections: the store answers again (each try bounded by the deadline).
            var etag: String?
            for _ in 1...15 {
                do {
                    etag = try await answer(within: .seconds(30)) {
                        try await store.validators(for: "https://example.org/1")?.etag
                    }
                    break
                } catch {
                    continue
                }
            }
            #expect(etag == "\"a\"", "the frozen write never committed; the first one is still there")
            let closed: Void? = try? await answer(within: .seconds(60)) { await store.close() }
            #expect(closed != nil, "the store closes")
        } catch {
            server.thaw()
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}
