import MarqueeCore
import MarqueeStore
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization

#if canImport(Glibc)
import Glibc
#endif

/// `marquee status` against real `marquee-index` processes.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct StatusCLITests {
    @Test func showsReadinessAndFiguresOfEachWorkerAndFailsWhenOneIsNotReady() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("status") + ".db"
        ).path
        defer { removeSQLiteFiles(path) }
        let topics = try await indexTopics()
        let ready = try await IndexWorker.start(
            topics: topics,
            group: TestEnvironment.uniqueName("index"),
            store: try .init(parsing: "sqlite:\(path)"),
            environment: ["MARQUEE_METRICS_ALLOWED_HOSTS": "index.marquee.example"]
        )
        try await produce((1...3).map { movieRecord(Int64($0), fetchedAt: 1_000) }, to: topics)
        try await ready.stored.wait("three records stored") { $0 >= 3 }

        // A second indexer whose store cannot be reached: paused, not ready, with its reason.
        let downTopics = try await indexTopics()
        let down = try await IndexWorker.start(
            topics: downTopics,
            group: TestEnvironment.uniqueName("index"),
            store: try .init(parsing: "postgres://marquee@127.0.0.1:1/none?sslmode=disable"),
            environment: ["MARQUEE_STORE_TIMEOUT": "2"]
        )
        try await produce([movieRecord(1, fetchedAt: 1_000)], to: downTopics)
        try await down.paused.wait("the stage paused for the store") { $0 }

        let address = { (worker: IndexWorker) in String(worker.base.dropFirst("http://".count)) }
        let run = try await runBuiltExecutable(
            "marquee",
            ["status", "--json"],
            environment: [
                "MARQUEE_WORKERS": "records=\(address(ready)),records=\(address(down)),fetch=127.0.0.1:1",
                "MARQUEE_CONFIG": nil,
            ]
        )
        #expect(run.status == 1, "a worker not ready fails the command: \(run.standardError)")
        let statuses = try #require(
            try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[String: Any]]
        )
        #expect(statuses.map { $0["stage"] as? String } == ["fetch", "records", "records"])
        let byAddress = Dictionary(uniqueKeysWithValues: statuses.map { ($0["address"] as? String ?? "", $0) })

        let readyStatus = try #require(byAddress[address(ready)])
        #expect(readyStatus["state"] as? String == "ready")
        let figures = try #require(readyStatus["figures"] as? [String: Any])
        #expect(figures["succeeded"] as? Double == 3, "\(figures)")
        #expect(figures["deadLettered"] == nil || figures["deadLettered"] as? Double == 0)
        #expect((figures["assignedPartitions"] as? Double ?? 0) >= 1)

        let downStatus = try #require(byAddress[address(down)])
        #expect(downStatus["state"] as? String == "not-ready")
        // The worker's reason as text, not the JSON of an HTTP error.
        #expect((downStatus["reason"] as? String ?? "").hasPrefix("the store is down since "), "\(downStatus)")
        #expect(!(downStatus["reason"] as? String ?? "").contains("{"), "\(downStatus)")

        let missing = try #require(byAddress["127.0.0.1:1"])
        #expect(missing["state"] as? String == "unreachable")
        #expect((missing["reason"] as? String ?? "").contains("connect"), "\(missing)")

        // The table names the same.
        let table = try await runBuiltExecutable(
            "marquee",
            ["status"],
            environment: ["MARQUEE_WORKERS": "records=\(address(ready))", "MARQUEE_CONFIG": nil]
        )
        #expect(table.status == 0, "\(table.standardError)")
        let row = try #require(table.standardOutput.split(separator: "\n").last)
        #expect(
            row.hasPrefix("records") && row.contains("ready") && row.contains(address(ready)),
            "\(table.standardOutput)"
        )
        let downTable = try await runBuiltExecutable(
            "marquee",
            ["status"],
            environment: ["MARQUEE_WORKERS": "records=\(address(down))", "MARQUEE_CONFIG": nil]
        )
        #expect(downTable.status == 1, "\(downTable.standardError)")
        let downRow = try #require(downTable.standardOutput.split(separator: "\n").last)
        #expect(
            downRow.contains("not-ready") && downRow.contains("the store is down since "),
            "\(downTable.standardOutput)"
        )
        #expect(!downRow.contains("{\"error\""), "\(downTable.standardOutput)")

        // The worker answers the name it was given, IP addresses and names without a dot; another site's name
        // (a page that rebinds its own name to the worker's address) is refused.
        #expect(try await httpGet(ready.base + "/metrics", host: "index.marquee.example").0 == 200)
        #expect(try await httpGet(ready.base + "/metrics", host: "marquee-index:9103").0 == 200)
        let (refused, refusal) = try await httpGet(ready.base + "/metrics", host: "evil.example")
        #expect(refused == 421)
        #expect(refusal.contains("MARQUEE_METRICS_ALLOWED_HOSTS"), "\(refusal)")

        await ready.stop()
        await down.stop()
    }

    /// A malformed setting is a configuration error (EX_CONFIG), as in every executable; a malformed flag is a
    /// usage error.
    @Test func aBadWorkersSettingIsAConfigurationError() async throws {
        let run = try await runBuiltExecutable(
            "marquee",
            ["status"],
            environment: ["MARQUEE_WORKERS": "index=h:1", "MARQUEE_CONFIG": nil]
        )
        #expect(run.status == 78)
        #expect(
            run.standardError.contains("MARQUEE_WORKERS: 'index=h:1' from the environment is not stage=host:port"),
            "\(run.standardError)"
        )
    }
}
