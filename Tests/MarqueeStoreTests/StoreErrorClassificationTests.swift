import GRDB
import MarqueeCore
import NIOCore
import Testing

@testable import MarqueeStore

#if canImport(Glibc)
import Glibc
#endif

/// Which failures of the databases' clients mean the store is down (the indexer pauses) and which mean the data
/// is refused (docs/stage.md, "What each failure is"), for the errors that need no server to be raised.
@Suite struct StoreErrorClassificationTests {
    private struct NotTheStores: Error {}

    @Test func theClientsOwnFailuresMeanPostgreSQLIsUnreachable() throws {
        let failures: [any Error] = [
            ChannelError.ioOnClosedChannel, ChannelError.connectPending, IOError(errnoCode: ECONNRESET, reason: "read"),
        ]
        for failure in failures {
            let error = try #require(PostgresEngine.storeError(failure, endpoint: "db:5432/marquee") as? StoreError)
            #expect(error.code == .unavailable, "\(failure)")
            #expect(error.message.hasPrefix("PostgreSQL (db:5432/marquee) is unreachable"), "\(error.message)")
            #expect(!error.refusedLogin)
        }
    }

    @Test func thePoolsCircuitBreakerIsNamedInWords() {
        // postgres-nio's pool error describes itself by its case's name.
        struct ConnectionPoolError: Error, CustomStringConvertible {
            var description: String { "ConnectionPoolError(base: connectionCreationCircuitBreakerTripped)" }
        }
        let error = PostgresEngine.storeError(ConnectionPoolError(), endpoint: "db:5432/marquee") as? StoreError
        #expect(error?.code == .unavailable)
        #expect(
            error?.message.contains("the connection pool's circuit breaker tripped") == true,
            "\(String(describing: error))"
        )
    }

    @Test func errorsThatAreNoneOfTheClientsPassThrough() {
        #expect(PostgresEngine.storeError(NotTheStores(), endpoint: "db") is NotTheStores)
        #expect(PostgresEngine.storeError(CancellationError(), endpoint: "db") is CancellationError)
        let rejected = StoreError(.rejected, "a constraint")
        #expect((PostgresEngine.storeError(rejected, endpoint: "db") as? StoreError)?.code == .rejected)
    }

    @Test(arguments: [
        ResultCode.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_FULL, .SQLITE_READONLY,
        .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_PERM, .SQLITE_AUTH, .SQLITE_NOMEM,
    ])
    func sqlitesOutagesMeanTheStoreIsDown(_ code: ResultCode) {
        let error = SQLiteEngine.storeError(DatabaseError(resultCode: code), path: "/var/marquee.db") as? StoreError
        #expect(error?.code == .unavailable, "\(code)")
    }

    @Test(arguments: [ResultCode.SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_TOOBIG])
    func sqlitesJudgmentsOfTheDataRejectIt(_ code: ResultCode) {
        let error = SQLiteEngine.storeError(DatabaseError(resultCode: code), path: "/var/marquee.db") as? StoreError
        #expect(error?.code == .rejected, "\(code)")
    }
}
