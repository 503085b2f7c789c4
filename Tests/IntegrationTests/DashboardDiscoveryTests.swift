import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueePipeline
import MarqueeStore
import MarqueeTestSupport
import Testing

import class Foundation.FileManager

#if canImport(Glibc)
import Glibc
#endif

/// `marquee dashboard` finds the workers as the members of the stages' consumer groups, at the address each
/// announces in its client id: real `marquee-index` processes, the real broker, no `MARQUEE_WORKERS`.
@Suite(.serialized, .timeLimit(.minutes(4)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct DashboardDiscoveryTests {
    @Test func theWorkersPanelListsTheGroupsMembersAndOneThatJoinsLater() async throws {
        let prefix = TestEnvironment.uniqueName("mqw") + "."
        let group = TestEnvironment.uniqueName("mqw-records")
        let topics = ["fetch", "images", "records"].map { StageTopics(stage: $0, prefix: prefix, tiers: 1) }
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        // Four partitions: each of the three workers is assigned some, so each says it is ready.
        _ = try await StageTopics.createAll(topics, partitions: 4, admin: admin)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(TestEnvironment.uniqueName("mqw"))
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        var workers: [IndexWorker] = []
        defer { for worker in workers { worker.process.signal(SIGKILL) } }
        func startWorker(_ number: Int) async throws -> String {
            let port = try MotoServerProcess.freePort()
            let store = try StoreLocation(parsing: "sqlite:\(folder)/worker-\(number).db")
            let worker = try await IndexWorker.start(
                topics: topics[2],
                group: group,
                store: store,
                environment: ["MARQUEE_METRICS_ADDRESS": "127.0.0.1:\(port)", "MARQUEE_LOG_LEVEL": "info"]
            )
            workers.append(worker)
            return "127.0.0.1:\(port)"
        }
        let first = try await startWorker(1)
        let second = try await startWorker(2)

        let serving = AsyncStream<Int>.makeStream()
        let dashboard = try ChildProcess(
            "marquee",
            arguments: [
                "dashboard", "--address", "127.0.0.1:0", "--interval", "500ms", "--brokers", TestEnvironment.brokers,
            ],
            environment: [
                "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_RETRY_DELAYS": "10s", "MARQUEE_GROUP_RECORDS": group,
                "MARQUEE_DLQ_READER_GROUP": TestEnvironment.uniqueName("mqw-dlq-reader"),
                "MARQUEE_STORE": "sqlite:\(folder)/dashboard.db",
            ],
            readsStandardError: true
        ) { line in
            if let range = line.range(of: "serving http://127.0.0.1:"),
                let port = Int(line[range.upperBound...].prefix { $0.isNumber })
            {
                serving.continuation.yield(port)
            }
        }
        defer { dashboard.signal(SIGKILL) }
        var ports = serving.stream.makeAsyncIterator()
        let port = try #require(await ports.next(), "marquee dashboard says where it serves")
        let base = "http://127.0.0.1:\(port)"

        // Both workers, found in the group alone, ready.
        var panel = try await self.workers(at: base, untilReady: [first, second])
        for address in [first, second] {
            let worker = try #require(panel.first { $0["address"]?.text == address }, "\(panel)")
            #expect(worker["stage"]?.text == "records")
            #expect(worker["state"]?.text == "ready")
            #expect(worker["found_by"] == .array([.string("group")]), "not from MARQUEE_WORKERS")
            let member = try #require(worker["members"]?.list?.first)
            #expect(member["client_id"]?.text == "marquee-records_\(address.replacing(":", with: "_"))")
            #expect(worker["figures"]?["assigned_partitions"]?.double ?? 0 >= 1)
        }
        #expect(
            !panel.contains { ($0["address"]?.text ?? "").hasSuffix(":9103") },
            "no default address of MARQUEE_WORKERS is asked: \(panel)"
        )
        let (status, page) = try await httpGet(base + "/")
        #expect(status == 200)
        #expect(page.contains("data-test=\"worker-\(first)-state\">ready<"), "\(page)")

        // A third worker joins the group (as a pod an autoscaler adds): it appears by itself.
        let third = try await startWorker(3)
        panel = try await self.workers(at: base, untilReady: [first, second, third])
        #expect(panel.filter { $0["stage"]?.text == "records" }.count == 3, "\(panel)")

        for worker in workers { await worker.stop() }
        dashboard.signal(SIGTERM)
        #expect(await dashboard.waitForExit(killingAfter: .seconds(30)) == 0)
    }

    /// `/api/workers` once every address of `addresses` is listed ready; polls the dashboard, which samples the
    /// group and the workers every half second, until a deadline.
    func workers(at base: String, untilReady addresses: [String]) async throws -> [JSONValue] {
        let deadline = ContinuousClock.now + .seconds(90)
        var last: [JSONValue] = []
        while ContinuousClock.now < deadline {
            let (status, body) = try await httpGet(base + "/api/workers")
            if status == 200, let workers = try? JSONValue.parse(Array(body.utf8))["workers"]?.list {
                last = workers
                let ready = addresses.allSatisfy { address in
                    workers.contains { $0["address"]?.text == address && $0["state"]?.text == "ready" }
                }
                if ready { return workers }
            }
            try await Task.sleep(for: .milliseconds(250))  // between polls, not synchronisation
        }
        Issue.record("not every worker of \(addresses) was listed ready: \(last)")
        throw CancellationError()
    }
}
