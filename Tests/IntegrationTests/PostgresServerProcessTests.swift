import Logging
import MarqueeTestSupport
import Testing

import class Foundation.FileManager

#if canImport(Glibc)
import Glibc
#endif

/// The test-owned PostgreSQL server: its stop, crash and restart, checked with psql alone.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct PostgresServerProcessTests {
    /// Starts a server, runs `body`, and shuts the server down whatever happens.
    func withServer<T>(
        settings: [String: String] = [:],
        _ body: (PostgresServerProcess) async throws -> T
    ) async throws -> T {
        let server = try await PostgresServerProcess.start(settings: settings)
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// Runs `body` and logs how long it took.
    func timed<T>(_ what: String, _ body: () async throws -> T) async rethrows -> T {
        let started = ContinuousClock.now
        let result = try await body()
        Logger.marqueeTest.info("PostgresServerProcess: \(what) took \(ContinuousClock.now - started)")
        return result
    }

    @Test func stopRefusesConnectionsAndRestartKeepsRows() async throws {
        let server = try await self.timed("start") { try await PostgresServerProcess.start() }
        let folder = server.folder
        do {
            #expect(server.url == "postgres://marquee@127.0.0.1:\(server.port)/marquee")
            #expect(folder.hasPrefix(PostgresServerProcess.folderPrefix))
            #expect(server.isRunning)
            #expect(try await server.psql("SELECT 1") == "1")
            #expect(try await server.psql("SELECT current_database(), current_user") == "marquee|marquee")
            #expect(try await server.psql("SHOW fsync") == "off")

            _ = try await server.psql("CREATE TABLE jobs (id int PRIMARY KEY, name text NOT NULL)")
            _ = try await server.psql("INSERT INTO jobs VALUES (1, 'one'), (2, 'two')")

            try await self.timed("stop") { try await server.stop() }
            #expect(!server.isRunning)
            let refused = await #expect(throws: PostgresServerProcess.Failure.self) {
                try await server.psql("SELECT 1")
            }
            #expect(refused?.standardError.contains("Connection refused") == true)
            #expect(refused?.exitStatus == 2)
            try await server.stop()  // stopping a stopped server does nothing

            try await self.timed("restart") { try await server.restart() }
            #expect(server.isRunning)
            #expect(try await server.psql("SELECT id, name FROM jobs ORDER BY id") == "1|one\n2|two")
            try await self.timed("restart while running") { try await server.restart() }
            #expect(try await server.psql("SELECT count(*) FROM jobs") == "2")
        } catch {
            await server.shutdown()
            throw error
        }
        await self.timed("shutdown") { await server.shutdown() }
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(!server.isRunning)
        await server.shutdown()  // again: nothing left to do
    }

    @Test func failedStatementThrowsWithPostgresMessage() async throws {
        try await self.withServer { server in
            let failure = await #expect(throws: PostgresServerProcess.Failure.self) {
                try await server.psql("SELECT * FROM missing_table")
            }
            #expect(failure?.standardError.contains("relation \"missing_table\" does not exist") == true)
            #expect(failure?.description.contains("psql") == true)
            // The connection still works afterwards, and a second database can be used.
            _ = try await server.psql("CREATE DATABASE other", database: "postgres")
            #expect(try await server.psql("SELECT current_database()", database: "other") == "other")
        }
    }

    @Test func killThenRestartRecoversCommittedRows() async throws {
        // synchronous_commit on: an acknowledged commit is in the WAL before kill() (see kill()'s note).
        try await self.withServer(settings: ["synchronous_commit": "on"]) { server in
            #expect(try await server.psql("SHOW synchronous_commit") == "on")
            _ = try await server.psql("CREATE TABLE offsets (partition int PRIMARY KEY, next bigint NOT NULL)")
            _ = try await server.psql("INSERT INTO offsets SELECT p, p * 10 FROM generate_series(0, 99) AS p")
            let port = server.port

            await self.timed("kill") { await server.kill() }
            #expect(!server.isRunning)
            await #expect(throws: PostgresServerProcess.Failure.self) { try await server.psql("SELECT 1") }

            try await self.timed("restart after kill (crash recovery)") { try await server.restart() }
            #expect(server.port == port)
            #expect(try await server.psql("SELECT count(*), sum(next) FROM offsets") == "100|49500")
            let log = String(
                decoding: try #require(FileManager.default.contents(atPath: server.logPath)),
                as: UTF8.self
            )
            #expect(log.contains("automatic recovery in progress"))
        }
    }

    @Test func failedStartSaysWhyAndLeavesNothing() async throws {
        // Owned by PID 1 (always running, so never taken for abandoned), whose folders no other test makes: the
        // servers other suites start meanwhile (under this process's PID) cannot change the count.
        let prefix = "marquee-pgtest-1-"
        func folders() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix(prefix) }.count
        }
        let before = try folders()
        let failure = await #expect(throws: PostgresServerProcess.Failure.self) {
            try await PostgresServerProcess._start(owner: 1, settings: ["shared_buffers": "plenty"])
        }
        // pg_ctl's message, then the server log's explanation.
        #expect(failure?.description.contains("pg_ctl start") == true)
        #expect(failure?.description.contains("invalid value for parameter \"shared_buffers\"") == true)
        #expect(try folders() == before)
    }

    @Test func abandonedServerIsRemoved() async throws {
        // Int32.max is above any pid_max, so no process of that PID runs: as if the test run that started the
        // server had died.
        let abandoned = try await PostgresServerProcess._start(owner: Int32.max)
        do {
            #expect(abandoned.folder.hasPrefix(PostgresServerProcess.folderPrefix + "\(Int32.max)-"))
            #expect(try await abandoned.psql("SELECT 1") == "1")
            // A server of this (running) process is left alone.
            try await self.withServer { mine in
                await PostgresServerProcess.removeAbandonedServers(minimumAge: .zero)
                let answer = try await mine.psql("SELECT 1")
                #expect(mine.isRunning)
                #expect(answer == "1")
            }
            #expect(!abandoned.isRunning)
            #expect(!FileManager.default.fileExists(atPath: abandoned.folder))
            let refused = await #expect(throws: PostgresServerProcess.Failure.self) {
                try await abandoned.psql("SELECT 1")
            }
            #expect(refused?.standardError.contains("Connection refused") == true)
        } catch {
            await abandoned.shutdown()
            throw error
        }
    }
}
