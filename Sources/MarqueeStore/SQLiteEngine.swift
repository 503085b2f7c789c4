import Foundation
import GRDB
import Synchronization

/// The embedded engine: one SQLite file in WAL mode through GRDB (readers do not block the writer).
///
/// A transaction's statements run one by one on GRDB's writer queue (so the async batch code can run between
/// them); ``SerialGate`` keeps transactions of this process from interleaving, and `BEGIN IMMEDIATE` with a busy
/// timeout keeps other processes (a second indexer, a fetch worker writing validators) out until the commit.
final class SQLiteEngine: SQLEngine {
    let dialect = SQLDialect.sqlite
    private let pool: DatabasePool
    private let gate = SerialGate()
    private let path: String

    init(path: String) throws(StoreError) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
        } catch {
            throw StoreError(.unavailable, "cannot create the folder of \(path): \(error.localizedDescription)")
        }
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            self.pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw Self.storeError(error, path: path) as? StoreError
                ?? StoreError(.unavailable, "SQLite (\(path)): \(error)")
        }
    }

    func transaction<T: Sendable>(_ body: (any SQLSession) async throws -> T) async throws -> T {
        await self.gate.enter()
        defer { self.gate.leave() }
        let pool = self.pool
        do {
            try await pool.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        } catch {
            throw Self.storeError(error, path: self.path)
        }
        do {
            let result = try await body(Session(pool: pool, path: self.path))
            try await pool.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
            return result
        } catch {
            try? await pool.writeWithoutTransaction { db in
                if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
            }
            throw Self.storeError(error, path: self.path)
        }
    }

    func read(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        do {
            return try await self.pool.read { db in try Self.rows(db, sql, binds) }
        } catch {
            throw Self.storeError(error, path: self.path)
        }
    }

    func ping() async throws { _ = try await self.read("SELECT 1", []) }

    func close() async {
        try? self.pool.close()
    }

    private struct Session: SQLSession {
        let pool: DatabasePool
        let path: String

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            try await self.pool.writeWithoutTransaction { db in try SQLiteEngine.rows(db, sql, binds) }
        }

        func execute(_ sql: String, _ binds: [SQLValue]) async throws {
            try await self.pool.writeWithoutTransaction { db in
                try db.execute(sql: sql, arguments: SQLiteEngine.arguments(binds))
            }
        }
    }

    static func arguments(_ binds: [SQLValue]) -> StatementArguments {
        StatementArguments(
            binds.map { value -> (any DatabaseValueConvertible)? in
                switch value {
                case .null: nil
                case .int(let value): value
                case .real(let value): value
                case .text(let value): value
                }
            }
        )
    }

    static func rows(_ db: Database, _ sql: String, _ binds: [SQLValue]) throws -> [[SQLValue]] {
        try Row.fetchAll(db, sql: sql, arguments: self.arguments(binds)).map { row in
            row.databaseValues.map { value in
                switch value.storage {
                case .null: .null
                case .int64(let value): .int(value)
                case .double(let value): .real(value)
                case .string(let value): .text(value)
                case .blob(let data): .text(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }

    /// SQLite's errors: a busy or locked database, I/O, a full disk, a read-only or unopenable file, a file that
    /// is not (or no longer) a database, permissions mean the store is unavailable now (docs/stage.md, "What each
    /// failure is"); constraint and type errors mean the data is rejected.
    static func storeError(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let message = "SQLite (\(path)): \(error.message ?? "\(error.resultCode)")"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_FULL, .SQLITE_READONLY,
            .SQLITE_PROTOCOL, .SQLITE_NOMEM, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_PERM, .SQLITE_AUTH,
            .SQLITE_NOLFS:
            return StoreError(.unavailable, message)
        default:
            return StoreError(.rejected, message)
        }
    }
}

/// A first-come, first-served lock for async code (one holder at a time).
final class SerialGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = self.state.withLock { state in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func leave() {
        let next = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
