import ArgumentParser
import Logging
import MarqueeCore
import MarqueeJSON
@_spi(Benchmarking) import MarqueeStore
import NIOCore
import PostgresNIO

import struct Foundation.Date
import class Foundation.FileManager
import struct Foundation.UUID

/// `make bench-index`: records/s through the store's batched upserts (the indexer's path: one transaction per
/// batch) against PostgreSQL's `COPY` of the same rows into scratch tables of the same shape (`LIKE … INCLUDING
/// ALL`: same keys and indexes), in the same run on the same server; and the same records into SQLite.
///
/// Each round uses a new database and new records (TMDB list movies with genres, a localized title each, every
/// fifth a review, every tenth a box-office entry). The order of the two PostgreSQL runs alternates.
@main
struct IndexBenchmark: AsyncParsableCommand {
    @Option(help: "A PostgreSQL database to create the rounds' databases from.")
    var postgres = "postgres://marquee@127.0.0.1:15432/marquee?sslmode=disable"

    @Option(help: "Records per round.")
    var records = 20_000

    @Option(help: "Records per store transaction (the indexer's batch size).")
    var batchSize = 500

    @Option(help: "Batches written at once (the indexer's --writers).")
    var writers = 2

    @Option(help: "Rounds.")
    var rounds = 3

    @Option(help: "Folder for the SQLite files.")
    var sqliteFolder = "/tmp"

    func run() async throws {
        var logger = Logger(label: "bench-index")
        // .error: the COPY client's pool warns when a lease races its run() task starting.
        logger.logLevel = .error
        let admin = try Store.open(try StoreLocation(parsing: self.postgres), maximumConnections: 1, logger: logger)
        var ratios: [Double] = []
        var upserts: [Double] = []
        var copies: [Double] = []
        var sqlites: [Double] = []
        for round in 1...self.rounds {
            let records = Self.records(count: self.records, round: round)
            let database = "bench_index_\(UUID().uuidString.prefix(8).lowercased())"
            _ = try await admin.sql("CREATE DATABASE \(database)")
            guard case .postgres(let host, let port, let user, let password, _, let tls) = admin.location.engine else {
                throw ValidationError("--postgres must be a postgres:// URL")
            }
            let location = StoreLocation(
                engine: .postgres(host: host, port: port, user: user, password: password, database: database, tls: tls)
            )
            let store = try Store.open(location, maximumConnections: self.writers, logger: logger)
            _ = try await store.migrate()
            let rows = try Store.tableRows(records)
            for (table, _, _) in rows {
                _ = try await store.sql("CREATE TABLE scratch_\(table) (LIKE \(table) INCLUDING ALL)")
            }

            var upsertSeconds = 0.0
            var copySeconds = 0.0
            for step in round % 2 == 1 ? ["upsert", "copy"] : ["copy", "upsert"] {
                if step == "upsert" {
                    upsertSeconds = try await Self.time {
                        try await Self.writeBatches(
                            records,
                            batchSize: self.batchSize,
                            writers: self.writers,
                            to: store
                        )
                    }
                } else {
                    copySeconds = try await Self.time {
                        // The same rows, formatted here as COPY text (as a loader written against COPY would).
                        let rows = try Store.tableRows(records)
                        try await Self.copy(rows, location: location, logger: logger)
                    }
                }
            }
            let stored = try await store.sql(
                "SELECT (SELECT COUNT(*) FROM movies), (SELECT COUNT(*) FROM scratch_movies)"
            )
            guard let counts = stored.first, counts[0] == counts[1] else {
                throw ValidationError("the two paths stored different rows: \(stored)")
            }
            await store.close()
            _ = try await admin.sql("DROP DATABASE \(database)")

            let path = "\(self.sqliteFolder)/bench-index-\(UUID().uuidString.prefix(8)).db"
            let sqlite = try Store.open(try StoreLocation(parsing: "sqlite:\(path)"), logger: logger)
            _ = try await sqlite.migrate()
            let sqliteSeconds = try await Self.time {
                try await Self.writeBatches(records, batchSize: self.batchSize, writers: self.writers, to: sqlite)
            }
            await sqlite.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

            let upsertRate = Double(records.count) / upsertSeconds
            let copyRate = Double(records.count) / copySeconds
            let sqliteRate = Double(records.count) / sqliteSeconds
            ratios.append(upsertRate / copyRate)
            upserts.append(upsertRate)
            copies.append(copyRate)
            sqlites.append(sqliteRate)
            print(
                "round \(round): upsert \(Int(upsertRate)) records/s, COPY \(Int(copyRate)) records/s, "
                    + "ratio \(String(format: "%.2f", upsertRate / copyRate)), SQLite \(Int(sqliteRate)) records/s"
            )
        }
        await admin.close()
        print(
            "bench-index: ratio=\(String(format: "%.2f", Self.median(ratios))) upsert=\(Int(Self.median(upserts))) "
                + "copy=\(Int(Self.median(copies))) sqlite=\(Int(Self.median(sqlites))) records=\(self.records) "
                + "batch=\(self.batchSize) writers=\(self.writers)"
        )
    }

    /// The indexer's path: batches of `batchSize`, `writers` transactions at once.
    static func writeBatches(_ records: [Record], batchSize: Int, writers: Int, to store: Store) async throws {
        let batches = stride(from: 0, to: records.count, by: batchSize).map {
            Array(records[$0..<min($0 + batchSize, records.count)])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, batch) in batches.enumerated() {
                if index >= writers { try await group.next() }
                group.addTask { _ = try await store.write(batch) }
            }
            try await group.waitForAll()
        }
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func time(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `COPY scratch_<table> (columns) FROM STDIN` for each table, in text format, 1 MB chunks.
    static func copy(
        _ tables: [(table: String, columns: [String], rows: [[JSONValue]])],
        location: StoreLocation,
        logger: Logger
    ) async throws {
        guard case .postgres(let host, let port, let user, let password, let database, _) = location.engine else {
            return
        }
        let client = PostgresClient(
            configuration: .init(
                host: host,
                port: port,
                username: user,
                password: password,
                database: database,
                tls: .disable
            ),
            backgroundLogger: logger
        )
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        try await client.withConnection { connection in
            for (table, columns, rows) in tables {
                try await connection.copyFrom(table: "scratch_\(table)", columns: columns, logger: logger) { writer in
                    var buffer = ByteBuffer()
                    buffer.reserveCapacity(1 << 20)
                    for row in rows {
                        for (index, value) in row.enumerated() {
                            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                            Self.writeCopyText(value, to: &buffer)
                        }
                        buffer.writeInteger(UInt8(ascii: "\n"))
                        if buffer.readableBytes >= 1 << 20 {
                            try await writer.write(buffer)
                            buffer.clear()
                        }
                    }
                    if buffer.readableBytes > 0 { try await writer.write(buffer) }
                }
            }
        }
    }

    static func writeCopyText(_ value: JSONValue, to buffer: inout ByteBuffer) {
        let text: String
        switch value {
        case .null:
            buffer.writeString("\\N")
            return
        case .bool(let flag): text = flag ? "t" : "f"
        case .integer(let number): text = String(number)
        case .number(let number): text = number.description
        case .string(let string): text = string
        case .array, .object: text = String(decoding: value.encoded(), as: UTF8.self)
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case UInt8(ascii: "\n"): buffer.writeString("\\n")
            case UInt8(ascii: "\r"): buffer.writeString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }

    /// The round's records: ids unique to the round.
    static func records(count: Int, round: Int) -> [Record] {
        let fetchedAt = Int64(Date().timeIntervalSince1970 * 1000)
        var records: [Record] = []
        records.reserveCapacity(count)
        var movie = Int64(round) * 10_000_000
        while records.count < count {
            movie += 1
            records.append(
                Record(
                    kind: .movie,
                    key: "tmdb:movie:\(movie)",
                    fetchedAt: fetchedAt,
                    data: [
                        "movie_id": .integer(movie), "original_title": .string("기생충 \(movie)"),
                        "original_language": .string("ko"), "release_date": .string("2019-05-30"),
                        "adult": .bool(false),
                        "video": .bool(false), "popularity": .number(Double(movie % 1000) / 7),
                        "vote_average": .number(8.5),
                        "vote_count": .integer(movie % 20_000),
                        "genre_ids": .array([.integer(18), .integer(35), .integer(53)]),
                        "poster_path": .string("/7IiTTgloJzvGI1TAYymCfbfl3vT.jpg"), "backdrop_path": .null,
                    ]
                )
            )
            guard records.count < count else { break }
            records.append(
                Record(
                    kind: .movieLocalized,
                    key: "tmdb:movie:\(movie):ko-KR",
                    fetchedAt: fetchedAt,
                    data: [
                        "movie_id": .integer(movie), "language": .string("ko-KR"), "title": .string("기생충 \(movie)"),
                        "overview": .string(
                            "전원백수로 살 길 막막하지만 사이는 좋은 기택 가족. 장남 기우에게 명문대생 친구 민혁이 연결시켜 준 고액 과외 자리는 모처럼 싹튼 고정수입의 희망이다."
                        ),
                    ]
                )
            )
            if movie % 5 == 0, records.count < count {
                records.append(
                    Record(
                        kind: .review,
                        key: "tmdb:review:r\(movie)",
                        fetchedAt: fetchedAt,
                        data: [
                            "review_id": .string("r\(movie)"), "movie_id": .integer(movie), "author": .string("critic"),
                            "author_name": .null, "username": .string("critic"), "avatar_url": .null,
                            "rating": .number(9),
                            "content": .string("A sharp, funny and finally devastating film.\r\nRecommended."),
                            "url": .string("https://www.themoviedb.org/review/r\(movie)"),
                            "created_at": .string("2019-10-15T12:00:00.000Z"),
                            "updated_at": .string("2019-10-15T12:00:00.000Z"),
                        ]
                    )
                )
            }
            if movie % 10 == 0, records.count < count {
                let rank = movie / 10 % 10 + 1
                let day = 20_190_000 + movie / 100 % 10_000
                records.append(
                    Record(
                        kind: .boxOfficeEntry,
                        key: "kofic:daily:\(day):\(rank)",
                        fetchedAt: fetchedAt,
                        data: [
                            "period": .string("daily"), "date": .null, "year_week": .null, "show_range": .null,
                            "show_range_start": .null, "show_range_end": .null, "rank": .integer(rank),
                            "rank_change": .integer(0), "is_new": .bool(false), "movie_cd": .string("20183782"),
                            "movie_name": .string("기생충"), "open_date": .string("2019-05-30"),
                            "sales_amount": .integer(1_234_567_890),
                            "sales_share": .number(45.6), "audience_count": .integer(123_456),
                            "audience_accumulated": .integer(5_000_000),
                            "screen_count": .integer(1_900), "show_count": .integer(9_000),
                        ]
                    )
                )
            }
        }
        return records
    }
}
