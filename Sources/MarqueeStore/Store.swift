import Foundation
public import Logging
public import MarqueeCore
public import MarqueeJSON
public import ServiceLifecycle

/// The catalogue store (docs/design.md, "Modules"; docs/store.md): the same schema on PostgreSQL or SQLite.
///
/// - ``migrate()`` brings the schema up to date (safe to run again, and from several processes at once).
/// - ``write(_:)`` upserts a batch of records in **one transaction**: rows keyed by their natural keys, a row
///   replaced only by a newer `fetched_at` (a duplicate or an older record changes nothing), then the children of
///   the rows that changed (genre links, a book's authors, an image's variants) and the KOFIC↔TMDB links.
/// - The queries of `marquee query` (StoreQueries.swift) and the shared HTTP validator cache.
///
/// A one-shot tool opens the store, uses it and calls ``close()``; a worker lists it among its services, and the
/// store closes on graceful shutdown once the services listed after it stopped (``run()``).
public final class Store: Service, Sendable {
    public let location: StoreLocation
    let engine: any SQLEngine

    init(location: StoreLocation, engine: any SQLEngine) {
        self.location = location
        self.engine = engine
    }

    /// Opens the store (PostgreSQL connections are made on first use; an SQLite file and its folder are created).
    ///
    /// - Parameters:
    ///   - maximumConnections: PostgreSQL's pool size (ignored for SQLite).
    ///   - timeout: The longest one PostgreSQL operation may take, waiting for a connection included; past it the
    ///     store counts as unavailable (SQLite waits at most 10 s for another process's lock).
    public static func open(
        _ location: StoreLocation,
        maximumConnections: Int = 4,
        timeout: Duration = .seconds(30),
        logger: Logger
    ) throws(StoreError) -> Store {
        switch location.engine {
        case .sqlite(let path):
            return Store(location: location, engine: try SQLiteEngine(path: path))
        case .postgres(let host, let port, let user, let password, let database, let tls):
            let engine = try PostgresEngine(
                host: host,
                port: port,
                user: user,
                password: password,
                database: database,
                tls: tls,
                maximumConnections: maximumConnections,
                timeout: timeout,
                logger: logger
            )
            return Store(location: location, engine: engine)
        }
    }

    /// Closes connections (PostgreSQL) or the file (SQLite).
    public func close() async { await self.engine.close() }

    /// Keeps the store open until graceful shutdown (or cancellation), then closes it.
    public func run() async throws {
        try? await gracefulShutdown()
        await self.close()
    }

    /// Whether the store answers now.
    public func ping() async throws { try await self.engine.ping() }

    // MARK: - Migrations

    /// What ``migrate()`` did.
    public struct MigrationReport: Hashable, Sendable {
        /// The versions applied now (empty when the store was up to date).
        public var applied: [Int]
        /// The store's version afterwards.
        public var version: Int
    }

    /// Applies the migrations the store has not seen, in one transaction; concurrent callers wait for each other
    /// (PostgreSQL: an advisory lock; SQLite: the write lock).
    ///
    /// - Throws: ``StoreError`` `migration` when the store's schema is newer than this program's.
    public func migrate() async throws -> MigrationReport {
        let dialect = self.engine.dialect
        return try await self.engine.transaction { session in
            if dialect == .postgres {
                try await session.execute("SELECT pg_advisory_xact_lock(7406514001)", [])
            }
            try await session.execute(dialect.ddl(Schema.migrationsTable), [])
            let seen = Set(
                try await session.query("SELECT version FROM schema_migrations", []).compactMap { $0.first?.int }
            )
            if let newest = seen.max(), newest > Schema.latestVersion {
                throw StoreError(
                    .migration,
                    "the store's schema is version \(newest), newer than this program's (\(Schema.latestVersion)): upgrade Marquee"
                )
            }
            var applied: [Int] = []
            for migration in Schema.migrations where !seen.contains(Int64(migration.version)) {
                for statement in Self.statements(dialect.ddl(migration.sql)) {
                    try await session.execute(statement, [])
                }
                try await session.execute(
                    dialect.placeholders("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
                    [.int(Int64(migration.version)), .text(migration.name), .int(Int64(JobID.nowMilliseconds()))]
                )
                applied.append(migration.version)
            }
            return MigrationReport(applied: applied, version: max(Int(seen.max() ?? 0), applied.max() ?? 0))
        }
    }

    /// A migration's statements, split at the `;` that end lines.
    static func statements(_ sql: String) -> [String] {
        sql.split(separator: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    // MARK: - Writing records

    /// A record checked against its kind's schema and mapped to its rows, ready for ``write(_:)-([PreparedRecord])``
    /// (so a caller that sets invalid records aside first does not map each record twice).
    public struct PreparedRecord: Sendable {
        let rows: [RowWrite]
    }

    /// Checks a record against its kind's schema and maps it to rows, without writing it.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code-swift.enum/invalidRecord``) naming the field at fault.
    ///
    /// - Parameter refresh: Why the record was fetched (its envelope's ``Envelope/refresh``): a `movie` record with
    ///   a reason also records the movie's refresh (`movie_refreshes`), unless a newer refresh is stored.
    public static func prepare(_ record: Record, refresh: RefreshReason? = nil) throws(StoreError) -> PreparedRecord {
        PreparedRecord(rows: try RecordRows.rows(for: record, refresh: refresh))
    }

    /// Checks a record against its kind's schema without writing it.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code-swift.enum/invalidRecord``) naming the field at fault.
    public static func validate(_ record: Record) throws(StoreError) {
        _ = try self.prepare(record)
    }

    /// What one ``write(_:)`` did.
    public struct WriteSummary: Hashable, Sendable {
        public var records = 0
        /// Rows inserted or replaced by a newer version.
        public var rowsWritten = 0
        /// Rows left alone because the store had the same or a newer version.
        public var rowsUnchanged = 0
        /// KOFIC↔TMDB links made.
        public var links = 0
    }

    /// Upserts `records` in one transaction.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code-swift.enum/invalidRecord``) before anything is written when a record is invalid (check with
    ///   ``prepare(_:refresh:)`` first to set such records aside); ``StoreError`` when the transaction failed (nothing
    ///   of the batch was written).
    public func write(_ records: [Record]) async throws -> WriteSummary {
        try await self.write(try records.map { (record) throws(StoreError) in try Self.prepare(record) })
    }

    /// Whether `row` is a `retried` outcome that must not replace `stored`, a finished one, whatever their attempts
    /// (``Table/keepsFinishedOutcomes``; the upsert applies the same rule to stored rows).
    static func isLateRetry(_ row: RowWrite, after stored: RowWrite) -> Bool {
        guard case .string("retried")? = row.values["outcome"], case .string(let finished)? = stored.values["outcome"]
        else { return false }
        return finished != "retried"
    }

    /// Upserts prepared records in one transaction.
    ///
    /// - Throws: ``StoreError`` when the transaction failed (nothing of the batch was written).
    public func write(_ records: [PreparedRecord]) async throws -> WriteSummary {
        var summary = WriteSummary(records: records.count)
        // The newest version of each row (a batch may hold the same entity twice).
        var latest: [String: [String: RowWrite]] = [:]
        for record in records {
            for row in record.rows {
                let key = row.key
                guard let existing = latest[row.table.name]?[key] else {
                    latest[row.table.name, default: [:]][key] = row
                    continue
                }
                summary.rowsUnchanged += 1
                var (older, newer) = existing.fetchedAt > row.fetchedAt ? (row, existing) : (existing, row)
                if row.table.keepsFinishedOutcomes, Self.isLateRetry(newer, after: older) { swap(&older, &newer) }
                for (column, accumulation) in row.table.accumulating {
                    newer.values[column] = accumulation.merge(older.values[column], newer.values[column])
                }
                latest[row.table.name, default: [:]][key] = newer
            }
        }
        guard !latest.isEmpty else { return summary }
        // Rows in key order: concurrent batches then lock shared rows in the same order (no deadlock).
        let ordered = latest.mapValues { $0.sorted { $0.key < $1.key }.map(\.value) }
        var attempt = 1
        while true {
            do {
                return try await self.write(ordered, summary: summary)
            } catch let error as StoreError where error.code == .conflict && attempt < 3 {
                attempt += 1  // a serialization failure or deadlock: the whole transaction again
            }
        }
    }

    private func write(_ latest: [String: [RowWrite]], summary: WriteSummary) async throws -> WriteSummary {
        let dialect = self.engine.dialect
        let now = Int64(JobID.nowMilliseconds())
        return try await self.engine.transaction { session in
            var summary = summary
            var koficCodes: [JSONValue] = []
            var movieIDs: Set<Int64> = []
            for table in Tables.gated {
                guard let rows = latest[table.name], !rows.isEmpty else { continue }
                let written = Set(
                    try await session.query(
                        dialect.upsert(table),
                        [Self.json(rows.map(\.values), columns: table.columns)]
                    )
                    .compactMap { $0.first?.text }
                )
                summary.rowsWritten += written.count
                summary.rowsUnchanged += rows.count - written.count
                let winners = written.count == rows.count ? rows : rows.filter { written.contains($0.key) }
                try await Self.replaceChildren(of: winners, in: table, session: session, dialect: dialect)
                switch table.name {
                case Tables.koficMovies.name: koficCodes += winners.compactMap { $0.values["movie_cd"] }
                case Tables.movies.name, Tables.movieTranslations.name:
                    movieIDs.formUnion(
                        winners.compactMap { if case .integer(let id)? = $0.values["movie_id"] { id } else { nil } }
                    )
                default: break
                }
            }
            let linksByCodes = !koficCodes.isEmpty
            var linksByMovieIDs = !movieIDs.isEmpty
            if linksByMovieIDs, !linksByCodes {
                linksByMovieIDs = !(try await session.query(SQLDialect.anyKOFICMovie, []).isEmpty)
            }
            if linksByCodes || linksByMovieIDs {
                summary.links = try await session.query(
                    dialect.linkMovies(byCodes: linksByCodes, byMovieIDs: linksByMovieIDs),
                    [Self.json(koficCodes), Self.json(movieIDs.sorted().map { .integer($0) }), .int(now)]
                ).count
            }
            return summary
        }
    }

    private static func replaceChildren(
        of winners: [RowWrite],
        in table: Table,
        session: any SQLSession,
        dialect: SQLDialect
    ) async throws {
        var parents: [String: [[String: JSONValue]]] = [:]
        var children: [String: (Table, [[String: JSONValue]])] = [:]
        for row in winners {
            for child in row.children {
                parents[child.table.name, default: []].append(row.values)
                children[child.table.name, default: (child.table, [])].1 += child.rows
            }
        }
        for (name, keys) in parents.sorted(by: { $0.key < $1.key }) {
            guard let (child, rows) = children[name] else { continue }
            try await session.execute(
                dialect.deleteChildren(child, parentKey: table.key),
                [Self.json(keys, columns: table.key)]
            )
            if !rows.isEmpty {
                try await session.execute(dialect.insertChildren(child), [Self.json(rows, columns: child.columns)])
            }
        }
    }

    /// Rows as one JSON array of objects holding `columns`, written in column order (no key sorting, no
    /// intermediate document).
    static func json(_ rows: [[String: JSONValue]], columns: [Column]) -> SQLValue {
        var writer = JSONWriter(capacity: rows.count * columns.count * 16 + 2)
        writer.beginArray()
        for row in rows {
            writer.beginObject()
            for column in columns {
                writer.key(column.name)
                writer.write(row[column.name] ?? .null)
            }
            writer.endObject()
        }
        writer.endArray()
        return .text(String(decoding: writer.finish(), as: UTF8.self))
    }

    static func json(_ values: [JSONValue]) -> SQLValue {
        .text(String(decoding: JSONValue.array(values).encoded(), as: UTF8.self))
    }

    // MARK: - HTTP validator cache

    /// The validators (`ETag`, `Last-Modified`) stored for a URL (redacted: no keys), if any, and what the
    /// validated response was kept as (an image's SHA-256; `nil` for API responses).
    public func validators(
        for url: String
    ) async throws -> (etag: String?, lastModified: String?, content: String?)? {
        let rows = try await self.engine.read(
            self.engine.dialect.placeholders(
                "SELECT etag, last_modified, content FROM http_validators WHERE url = ?"
            ),
            [.text(url)]
        )
        guard let row = rows.first else { return nil }
        return (row[0].text, row[1].text, row[2].text)
    }

    /// Stores (replaces) a URL's validators, with what the validated response was kept as.
    public func storeValidators(
        etag: String?,
        lastModified: String?,
        content: String? = nil,
        for url: String
    ) async throws {
        let dialect = self.engine.dialect
        let sql = dialect.placeholders(
            """
            INSERT INTO http_validators (url, etag, last_modified, content, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified,
            content = excluded.content, updated_at = excluded.updated_at
            """
        )
        let binds: [SQLValue] = [
            .text(url), etag.map { .text($0) } ?? .null, lastModified.map { .text($0) } ?? .null,
            content.map { .text($0) } ?? .null, .int(Int64(JobID.nowMilliseconds())),
        ]
        try await self.engine.transaction { session in try await session.execute(sql, binds) }
    }
}

extension Store {
    /// The rows `records` become, by table (children included), each row's values in `columns` order — what
    /// ``write(_:)`` sends, for the benchmark's `COPY` of the same rows. Duplicates are not removed.
    @_spi(Benchmarking)
    public static func tableRows(
        _ records: [Record]
    ) throws -> [(table: String, columns: [String], rows: [[JSONValue]])] {
        var byTable: [String: (columns: [String], rows: [[JSONValue]])] = [:]
        var order: [String] = []
        func add(_ table: Table, _ values: [String: JSONValue]) {
            let columns = table.columns.map(\.name)
            if byTable[table.name] == nil {
                byTable[table.name] = (columns, [])
                order.append(table.name)
            }
            byTable[table.name]!.rows.append(columns.map { values[$0] ?? .null })
        }
        for record in records {
            for row in try RecordRows.rows(for: record) {
                add(row.table, row.values)
                for child in row.children {
                    for values in child.rows { add(child.table, values) }
                }
            }
        }
        return order.map { (table: $0, columns: byTable[$0]!.columns, rows: byTable[$0]!.rows) }
    }
}

extension Store {
    /// Runs one statement outside a transaction (the benchmark's CREATE/DROP DATABASE, scratch tables, counts).
    @_spi(Benchmarking)
    public func sql(_ statement: String) async throws -> [[SQLValue]] {
        try await self.engine.read(statement, [])
    }
}

extension Store {
    /// Runs `first`, then `between` (outside the database: a test stops the server there), then `second`, in one
    /// transaction: for the tests of a connection lost in the middle of a transaction.
    @_spi(Testing)
    public func transaction(
        _ first: String,
        then between: @Sendable () async throws -> Void,
        _ second: String
    ) async throws {
        try await self.engine.transaction { session in
            try await session.execute(first, [])
            try await between()
            try await session.execute(second, [])
        }
    }
}
