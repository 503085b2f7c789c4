import Logging
import MarqueeCore
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared engine: PostgreSQL through postgres-nio's connection pool (`PostgresClient`), which this engine
/// runs in a task of its own from ``init(location:logger:)`` to ``close()``.
final class PostgresEngine: SQLEngine {
    let dialect = SQLDialect.postgres
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    /// Fired when the runner task starts the client (leasing before that makes postgres-nio warn).
    private let running = OneShotSignal()
    private let logger: Logger
    private let endpoint: String
    /// The longest an operation may take, waiting for a connection included: postgres-nio's pool retries a
    /// server it cannot reach (or log in to) without ever failing the request, so without a deadline a stopped
    /// server would hang the caller instead of reporting the store down.
    private let timeout: Duration
    /// The settings of the pool's connections, for the login check's own connection (``checkLoginIfNeeded()``).
    private let connectionConfiguration: PostgresConnection.Configuration
    /// Whether the pool is known to log in, for ``checkLoginIfNeeded()``.
    private let login = Mutex(LoginState.unchecked)

    init(
        host: String,
        port: Int,
        user: String,
        password: String?,
        database: String,
        tls: StoreLocation.TLSMode,
        maximumConnections: Int,
        timeout: Duration,
        logger: Logger
    ) throws(StoreError) {
        let tlsMode: PostgresClient.Configuration.TLS
        let connectionTLS: PostgresConnection.Configuration.TLS
        do {
            switch tls {
            case .disable:
                tlsMode = .disable
                connectionTLS = .disable
            case .prefer:
                tlsMode = .prefer(.makeClientConfiguration())
                connectionTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require:
                tlsMode = .require(.makeClientConfiguration())
                connectionTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw StoreError(.unavailable, "PostgreSQL (\(host):\(port)/\(database)): TLS cannot be set up: \(error)")
        }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: user,
            password: password,
            database: database,
            tls: tlsMode
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", "marquee")]
        var connectionConfiguration = PostgresConnection.Configuration(
            host: host,
            port: port,
            username: user,
            password: password,
            database: database,
            tls: connectionTLS
        )
        connectionConfiguration.options.connectTimeout = .seconds(5)
        connectionConfiguration.options.additionalStartupParameters = [("application_name", "marquee")]
        self.connectionConfiguration = connectionConfiguration
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.endpoint = "\(host):\(port)/\(database)"
        self.timeout = timeout
        self.runner = Task { [running] in
            running.fire()
            await client.run()
        }
    }

    func transaction<T: Sendable>(_ body: (any SQLSession) async throws -> T) async throws -> T {
        // The body runs only inside the deadline's child task, which ends before this call returns.
        try await withoutActuallyEscaping(body) { body in
            let body = UncheckedSendable(body)
            return try await self.withDeadline { leased in
                try await self.client.withConnection { connection in
                    leased.hold(connection)
                    defer { leased.release() }
                    // BEGIN, COMMIT and ROLLBACK through `statement` like every other query (postgres-nio's
                    // withTransaction sends them with its own, uncancellable waits).
                    let session = Session(connection: connection, timeout: self.timeout, logger: self.logger)
                    try await session.execute("BEGIN", [])
                    let value: T
                    do {
                        value = try await body.value(session)
                    } catch {
                        // Best effort: past the deadline the connection is closed, and the server rolls back.
                        try? await session.execute("ROLLBACK", [])
                        throw error
                    }
                    try await session.execute("COMMIT", [])
                    return value
                }
            }
        }
    }

    func read(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
        try await self.withDeadline { leased in
            try await self.client.withConnection { connection in
                leased.hold(connection)
                defer { leased.release() }
                return try await Self.statement(
                    Self.query(sql, binds),
                    on: connection,
                    timeout: self.timeout,
                    logger: self.logger
                )
            }
        }
    }

    /// Runs `operation` within ``timeout``; its errors become ``StoreError``s.
    ///
    /// Past the deadline (or when the caller is cancelled) the operation is cancelled, which ends its wait for the
    /// statement in flight (``statement(_:on:timeout:logger:)``), and the connection it holds is closed: the
    /// statement's answer would otherwise still come on it, from a server that stopped answering (frozen, or cut
    /// off without a reset) as late as TCP notices. The server rolls back what was open; the pool replaces the
    /// connection.
    private func withDeadline<T: Sendable>(
        _ operation: @escaping @Sendable (LeasedConnection) async throws -> T
    ) async throws -> T {
        await self.running.wait()
        let timeout = self.timeout
        let leased = LeasedConnection()
        do {
            return try await withThrowingTaskGroup(of: Deadline<T>.self) { group in
                group.addTask {
                    try await self.checkLoginIfNeeded()
                    return .finished(try await operation(leased))
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return .passed
                }
                defer { group.cancelAll() }
                let first: Deadline<T>?
                do {
                    first = try await group.next()
                } catch {
                    // No connection came: the next operation checks the login again.
                    if !leased.wasHeld { self.loginUnverified() }
                    leased.expire()  // the caller's cancellation (through the timer), or the operation's failure
                    throw error
                }
                guard case .finished(let value)? = first else {
                    if !leased.wasHeld { self.loginUnverified() }
                    leased.expire()
                    throw StoreError(
                        .unavailable,
                        "PostgreSQL (\(self.endpoint)) did not answer within \(timeout) (is it running, and do the user and database exist?)"
                    )
                }
                return value
            }
        } catch {
            throw self.storeError(error)
        }
    }

    func ping() async throws { _ = try await self.read("SELECT 1", []) }

    // MARK: - Login check

    /// Whether the pool is known to log in.
    private enum LoginState: Equatable {
        /// Not yet, or no connection came to the last operation that wanted one.
        case unchecked
        /// An operation is checking.
        case checking
        /// The check logged in.
        case verified
    }

    /// Logs in on a connection of its own, once, before the first operation, and again after an operation got no
    /// connection; a login PostgreSQL refuses fails the operation at once with PostgreSQL's own reason.
    ///
    /// postgres-nio's pool retries a connection whose login failed without failing the requests that wait for it:
    /// a database that does not exist, a role that does not exist or a wrong password (the server says so at once,
    /// FATAL 3D000, 28000, 28P01) would otherwise be reported only when the deadline passed, as a server that did
    /// not answer. Any other failure of the check (the server unreachable or starting up, too many connections) is
    /// left to the pool, which waits for the server within the deadline. One operation checks at a time; the
    /// others go on to the pool meanwhile.
    ///
    /// - Throws: A ``StoreError`` `unavailable` with PostgreSQL's reason when it refused the login.
    private func checkLoginIfNeeded() async throws {
        let isChecking = self.login.withLock { state in
            guard state == .unchecked else { return false }
            state = .checking
            return true
        }
        guard isChecking else { return }
        var outcome = LoginState.unchecked
        defer { self.login.withLock { $0 = outcome } }
        let configuration = self.connectionConfiguration
        let logger = self.logger
        do {
            // `answer` stops waiting when the operation's deadline cancels it; the connection, if it comes later,
            // is closed by the check itself.
            try await answer(within: self.timeout) {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration,
                    id: 0,
                    logger: logger
                )
                try? await connection.close()
            }
            outcome = .verified
        } catch let error as PSQLError where Self.isLoginRefusal(error) {
            throw self.loginRefusal(error)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Not a refusal: the pool waits for the server within the deadline, as without the check.
        }
    }

    /// No connection came to an operation: the next one checks the login first.
    private func loginUnverified() {
        self.login.withLock { state in
            if state == .verified { state = .unchecked }
        }
    }

    /// Whether `error` is a login the server (or the client, for the server's demands) refused, which trying again
    /// does not change: SQLSTATE class 28 (role, password, `pg_hba.conf`), 3D000 (no such database), 42501 (no
    /// CONNECT privilege); a password the server asks for and the location lacks; an authentication method or TLS
    /// the two sides do not share.
    static func isLoginRefusal(_ error: PSQLError) -> Bool {
        if error.code == .server {
            guard let state = error.serverInfo?[.sqlState] else { return false }
            return state.hasPrefix("28") || state == "3D000" || state == "42501"
        }
        return [.authMechanismRequiresPassword, .unsupportedAuthMechanism, .sslUnsupported].contains(error.code)
    }

    /// The ``StoreError`` of a refused login, with PostgreSQL's own message (it names the database or the role,
    /// never a password).
    private func loginRefusal(_ error: PSQLError) -> StoreError {
        let reason: String
        if error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? "?"
            reason = "\(error.serverInfo?[.message] ?? "login failed") [\(state)]"
        } else if error.code == .authMechanismRequiresPassword {
            reason = "the server asks for a password and the store location gives none"
        } else if error.code == .unsupportedAuthMechanism {
            reason = "the server asks for an authentication method this client does not support"
        } else {
            reason = "the server does not offer TLS, and the store location requires it (sslmode=require)"
        }
        return StoreError(
            .unavailable,
            "PostgreSQL (\(self.endpoint)) refused the connection: \(reason); fix the user, password or database "
                + "in MARQUEE_STORE (or MARQUEE_STORE_FILE)",
            refusedLogin: true
        )
    }

    func close() async {
        self.runner.cancel()
        await self.runner.value
    }

    private struct Session: SQLSession {
        let connection: PostgresConnection
        let timeout: Duration
        let logger: Logger

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [[SQLValue]] {
            try await PostgresEngine.statement(
                PostgresEngine.query(sql, binds),
                on: self.connection,
                timeout: self.timeout,
                logger: self.logger
            )
        }

        func execute(_ sql: String, _ binds: [SQLValue]) async throws {
            _ = try await self.query(sql, binds)
        }
    }

    /// Runs one statement on `connection` and collects its rows, in a task of its own that the caller stops
    /// waiting for when it is cancelled (its deadline passed) or after `timeout`.
    ///
    /// postgres-nio waits for a query's answer in a way cancellation does not end, and never answers a query
    /// written to a connection that has just closed (the write fails, the query's promise is left as it is): a
    /// server restarted between two statements of a transaction left the caller waiting for good, and its deadline
    /// with it (the fault run's stopped fetch worker, 2026-11-23). A connection known to be closed is not used.
    static func statement(
        _ query: PostgresQuery,
        on connection: PostgresConnection,
        timeout: Duration,
        logger: Logger
    ) async throws -> [[SQLValue]] {
        guard !connection.isClosed else {
            throw StoreError(.unavailable, "the connection to PostgreSQL closed (is the server restarting?)")
        }
        return try await answer(within: timeout) {
            try await Self.rows(connection.query(query, logger: logger))
        }
    }

    static func query(_ sql: String, _ values: [SQLValue]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .int(let value): binds.append(value)
            case .real(let value): binds.append(value)
            case .text(let value): binds.append(value)
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    static func rows(_ sequence: PostgresRowSequence) async throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        for try await row in sequence {
            var values: [SQLValue] = []
            values.reserveCapacity(row.count)
            for cell in row {
                guard cell.bytes != nil else {
                    values.append(.null)
                    continue
                }
                switch cell.dataType {
                case .int8, .int4, .int2: values.append(.int(try cell.decode(Int64.self)))
                case .float8, .float4, .numeric: values.append(.real(try cell.decode(Double.self)))
                case .bool: values.append(.int(try cell.decode(Bool.self) ? 1 : 0))
                default: values.append(.text(try cell.decode(String.self)))
                }
            }
            rows.append(values)
        }
        return rows
    }

    /// The connection an operation holds while it holds one, to close when nobody waits for its answer any more.
    private final class LeasedConnection: Sendable {
        private let state = Mutex<(connection: PostgresConnection?, isExpired: Bool, wasHeld: Bool)>(
            (nil, false, false)
        )

        /// Whether the operation got a connection from the pool.
        var wasHeld: Bool { self.state.withLock { $0.wasHeld } }

        /// The operation leased `connection` (closed at once when it expired meanwhile).
        func hold(_ connection: PostgresConnection) {
            let isExpired = self.state.withLock { state in
                state.connection = connection
                state.wasHeld = true
                return state.isExpired
            }
            if isExpired { let _: EventLoopFuture<Void> = connection.close() }
        }

        /// The operation is done with its connection (it goes back to the pool).
        func release() {
            self.state.withLock { $0.connection = nil }
        }

        /// Nobody waits for the operation's answer: close the connection it still holds, if any.
        func expire() {
            let connection = self.state.withLock { state in
                state.isExpired = true
                return state.connection
            }
            let _: EventLoopFuture<Void>? = connection?.close()
        }
    }

    private enum Deadline<Value: Sendable>: Sendable {
        case finished(Value)
        case passed
    }

    private struct UncheckedSendable<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// PostgreSQL's errors, sorted by whether the data or the server is at fault (docs/stage.md, "What each
    /// failure is"):
    ///
    /// - the store is unavailable now: no connection, a server shutting down, starting or refusing connections,
    ///   a login or database that does not work, resources or the system failing (SQLSTATE classes 08, 28, 3D,
    ///   53, 57, 58, XX); every error of the client and its pool that is not the server's answer (a connection
    ///   closed or reset, TLS, the pool's circuit breaker after connections failed for a while, the pool shut
    ///   down, NIO's channel and socket errors);
    /// - a conflict a retry resolves: 40001, 40P01, 55P03;
    /// - the data rejected: every other server error, and a statement with more parameters than the protocol
    ///   carries.
    static func storeError(_ error: any Error, endpoint: String) -> any Error {
        if error is StoreError || error is CancellationError { return error }
        if let error = error as? NoAnswer {
            return StoreError(.unavailable, "PostgreSQL (\(endpoint)) did not answer within \(error.timeout)")
        }
        guard let error = error as? PSQLError else {
            guard Self.isClientFailure(error) else { return error }
            return StoreError(.unavailable, "PostgreSQL (\(endpoint)) is unreachable: \(Self.describe(error))")
        }
        if error.code == .server, let state = error.serverInfo?[.sqlState] {
            let message = "PostgreSQL (\(endpoint)): \(error.serverInfo?[.message] ?? "error") [\(state)]"
            if ["08", "28", "3D", "53", "57", "58", "XX"].contains(state.prefix(2)) {
                // A login refused after the check (a password rotated while connected, pg_hba.conf reloaded).
                let isLogin = state.hasPrefix("28") || state == "3D000" || state == "42501"
                return StoreError(
                    .unavailable,
                    isLogin ? message + "; fix the user, password or database in MARQUEE_STORE" : message,
                    refusedLogin: isLogin
                )
            }
            if ["40001", "40P01", "55P03"].contains(state) { return StoreError(.conflict, message) }
            return StoreError(.rejected, message)
        }
        if error.code == .tooManyParameters {
            return StoreError(.rejected, "PostgreSQL (\(endpoint)): a statement has more parameters than it may carry")
        }
        var reason = "\(error.code)"
        if let underlying = error.underlying { reason += ": \(underlying)" }
        return StoreError(.unavailable, "PostgreSQL (\(endpoint)) is unreachable: \(reason)")
    }

    private func storeError(_ error: any Error) -> any Error { Self.storeError(error, endpoint: self.endpoint) }

    /// Whether `error` is the client's or its pool's failure to reach the server: postgres-nio's pool errors,
    /// NIO's channel, socket, connection and TLS errors. (An error the caller's own code throws is none of these.)
    static func isClientFailure(_ error: any Error) -> Bool {
        if error is ChannelError || error is IOError || error is NIOSSLError { return true }
        let type = String(reflecting: Swift.type(of: error))
        return type.contains("ConnectionPoolError") || type.contains("NIOConnectionError")
    }

    /// An error of the client or its pool in a few words. The pool's errors (postgres-nio's
    /// `_ConnectionPoolModule`, an underscored module this package does not import) are told by their
    /// description, which names the case.
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("connectionCreationCircuitBreakerTripped") {
            return "no connection could be made for a while (the connection pool's circuit breaker tripped)"
        }
        if text.contains("poolShutdown") { return "the connection pool is shut down" }
        return text
    }
}
