/// A value bound to a statement or read from a row.
public enum SQLValue: Hashable, Sendable {
    case null
    case int(Int64)
    case real(Double)
    case text(String)

    var int: Int64? {
        switch self {
        case .int(let value): value
        case .real(let value): Int64(exactly: value)
        case .text(let value): Int64(value)
        case .null: nil
        }
    }

    var real: Double? {
        switch self {
        case .int(let value): Double(value)
        case .real(let value): value
        case .text(let value): Double(value)
        case .null: nil
        }
    }

    var text: String? {
        switch self {
        case .text(let value): value
        case .int(let value): String(value)
        case .real(let value): String(value)
        case .null: nil
        }
    }

    /// SQLite stores booleans as 0/1; PostgreSQL's are cast to integers by the queries.
    var bool: Bool? { self.int.map { $0 != 0 } }
}

/// The statements of one transaction.
protocol SQLSession {
    /// Runs a statement and returns its rows.
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]]
    /// Runs a statement that returns no rows.
    func execute(_ sql: String, _ binds: [SQLValue]) async throws
}

/// An engine: transactions, and reads outside one.
protocol SQLEngine: Sendable {
    var dialect: SQLDialect { get }
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: (any SQLSession) async throws -> T) async throws -> T
    /// A read-only statement (its own snapshot).
    func read(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]]
    /// Whether the engine answers now (a trivial query).
    func ping() async throws
    func close() async
}
