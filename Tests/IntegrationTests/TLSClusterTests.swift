import Foundation
import MarqueeCore
import MarqueeTestSupport
import Synchronization
import Testing

/// A broker reached over TLS only: a tansu of the test's own on a plain port, Debian's stunnel in front of it
/// with a certificate of a CA the test makes, and tansu advertising stunnel's address (tansu's own TLS flags do
/// not work: ../shared/ENVIRONMENT.md).
private final class TLSBroker: Sendable {
    let folder: URL
    /// `127.0.0.1:port` of the TLS listener.
    let address: String
    private let processes: [Process]

    var caPath: String { self.folder.appendingPathComponent("ca.pem").path }
    var wrongCAPath: String { self.folder.appendingPathComponent("wrong-ca.pem").path }

    private init(folder: URL, address: String, processes: [Process]) {
        self.folder = folder
        self.address = address
        self.processes = processes
    }

    static func start() async throws -> TLSBroker {
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent(TestEnvironment.uniqueName("marquee-tls"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: path("san.cnf"),
            atomically: true,
            encoding: .utf8
        )
        for arguments in [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"),
                "-days", "1", "-subj", "/CN=marquee test CA",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"),
                "-subj", "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial",
                "-out", path("server.pem"), "-days", "1", "-extfile", path("san.cnf"),
            ],
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("wrong-ca.key"), "-out",
                path("wrong-ca.pem"), "-days", "1", "-subj", "/CN=another CA",
            ],
        ] {
            let run = try await runCommand(URL(fileURLWithPath: "/usr/bin/openssl"), arguments)
            try #require(run.status == 0, "openssl \(arguments.first ?? ""): \(run.standardError)")
        }
        let plain = try MotoServerProcess.freePort()
        let tls = try MotoServerProcess.freePort()
        try """
        foreground = yes
        pid =
        [kafka]
        accept = 127.0.0.1:\(tls)
        connect = 127.0.0.1:\(plain)
        cert = \(path("server.pem"))
        key = \(path("server.key"))

        """.write(toFile: path("stunnel.conf"), atomically: true, encoding: .utf8)
        // The repository's root: tansu is its local install (scripts/setup.sh).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let tansu = Process()
        tansu.executableURL = root.appendingPathComponent(".deps/bin/tansu")
        tansu.arguments = [
            "broker", "--listener-url", "tcp://127.0.0.1:\(plain)", "--advertised-listener-url",
            "tcp://127.0.0.1:\(tls)",
        ]
        tansu.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        tansu.standardError = try Self.log(path("tansu.log"))
        let stunnel = Process()
        stunnel.executableURL = URL(fileURLWithPath: "/usr/bin/stunnel4")
        stunnel.arguments = [path("stunnel.conf")]
        stunnel.standardError = try Self.log(path("stunnel.log"))
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/stunnel4"),
            "Debian's stunnel4 (scripts/setup.sh installs it)"
        )
        try tansu.run()
        try stunnel.run()
        return TLSBroker(folder: folder, address: "127.0.0.1:\(tls)", processes: [stunnel, tansu])
    }

    private static func log(_ path: String) throws -> FileHandle {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    /// Kills both: they are throw-away, and a child of the test process may have inherited SIGTERM ignored.
    func stop() {
        for process in self.processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: self.folder)
    }
}

@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct TLSClusterTests {
    /// Every `marquee` subcommand that talks to the broker, and every worker, reaches a broker that speaks only
    /// TLS with `-X security.protocol=ssl -X ssl.ca.location=…` (or the same in `MARQUEE_KAFKA_PROPERTIES`); with
    /// a CA that did not sign the broker's certificate they fail with one line that says so.
    @Test func everyToolAndWorkerConnectsThroughTLSAndAWrongCAIsOneLine() async throws {
        let broker = try await TLSBroker.start()
        defer { broker.stop() }
        let prefix = TestEnvironment.uniqueName("tls") + "."
        let environment: [String: String?] = [
            "MARQUEE_BROKERS": broker.address, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_TOPIC_PARTITIONS": "2",
            "MARQUEE_KAFKA_PROPERTIES": nil, "MARQUEE_KAFKA_PROPERTIES_FILE": nil, "MARQUEE_CONFIG": nil,
        ]
        let tls = ["-X", "security.protocol=ssl", "-X", "ssl.ca.location=\(broker.caPath)"]
        func marquee(_ arguments: [String], with extra: [String] = []) async throws -> CommandRun {
            try await runBuiltExecutable("marquee", arguments + extra, environment: environment)
        }
        // The broker answers through stunnel once both are up (a bounded wait for the processes to listen).
        var created = try await marquee(["topics", "create", "--timeout", "3"], with: tls)
        for _ in 0..<10 where created.status == 69 {
            try await Task.sleep(for: .milliseconds(500))  // a bounded poll of a starting process, not synchronisation
            created = try await marquee(["topics", "create", "--timeout", "3"], with: tls)
        }
        #expect(created.status == 0, "topics create over TLS: \(created.standardError)")
        let listed = try await marquee(["topics", "list", "--json"], with: tls)
        #expect(
            listed.status == 0 && listed.standardOutput.contains("\"\(prefix)fetch\""),
            "topics list: \(listed.standardError)"
        )
        let enqueued = try await marquee(["enqueue", "tmdb-movie", "550"], with: tls)
        #expect(enqueued.status == 0, "enqueue: \(enqueued.standardError)")
        let lag = try await marquee(["lag", "--json"], with: tls)
        #expect(lag.standardOutput.contains("\(prefix)fetch"), "lag: \(lag.status) \(lag.standardError)")
        let letters = try await marquee(["dlq", "list"], with: tls)
        #expect(letters.status == 0, "dlq list: \(letters.standardError)")
        let roundTrip = try await marquee(["roundtrip", "--count", "20", "--topic", "\(prefix)roundtrip"], with: tls)
        #expect(roundTrip.status == 0, "roundtrip: \(roundTrip.standardError)")
        let groupsListed = try await marquee(["groups", "list", "--json"], with: tls)
        #expect(groupsListed.status == 0, "groups list: \(groupsListed.standardError)")
        let described = try await marquee(["groups", "describe", "\(prefix)fetch"], with: tls)
        #expect(described.status == 0, "groups describe: \(described.standardError)")
        // Nothing consumes: drain reads the lag over TLS and says the pipeline did not drain (1, not 69).
        let drained = try await marquee(["drain", "--max-wait", "2s", "--interval", "500ms"], with: tls)
        #expect(
            drained.status == 1 && drained.standardError.contains("not drained"),
            "drain: \(drained.status) \(drained.standardError)"
        )

        // The long-running tools: the lag exporter and the dashboard serve what they read over TLS.
        for (arguments, path, expected) in [
            (["lag", "--serve", "127.0.0.1:0", "--interval", "500ms"], "/metrics", "group=\"\(prefix)fetch\""),
            (["dashboard", "--address", "127.0.0.1:0", "--interval", "500ms"], "/api/lag", "\(prefix)fetch"),
        ] {
            let serving = AsyncStream<Int>.makeStream()
            var processEnvironment: [String: String] = [:]
            for (name, value) in environment { processEnvironment[name] = value ?? "" }
            let process = try ChildProcess(
                "marquee",
                arguments: arguments + tls,
                environment: processEnvironment,
                readsStandardError: true
            ) { line in
                if let range = line.range(of: "serving http://127.0.0.1:"),
                    let port = Int(line[range.upperBound...].prefix { $0.isNumber })
                {
                    serving.continuation.yield(port)
                }
            }
            var ports = serving.stream.makeAsyncIterator()
            let port = try #require(await ports.next(), "\(arguments[0]) says where it serves")
            let deadline = ContinuousClock.now + .seconds(30)
            var body = ""
            while ContinuousClock.now < deadline, !body.contains(expected) {
                body = (try? await httpGet("http://127.0.0.1:\(port)\(path)").1) ?? ""
                if !body.contains(expected) { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(body.contains(expected), "\(arguments[0]) over TLS: \(body.prefix(500))")
            process.signal(SIGTERM)
            #expect(await process.waitForExit(killingAfter: .seconds(30)) == 0, "\(arguments[0]) stopped cleanly")
        }

        // The workers, with the properties in the environment: each joins its group and gets partitions.
        let folder = broker.folder.path
        let workerEnvironment = [
            "MARQUEE_BROKERS": broker.address, "MARQUEE_TOPIC_PREFIX": prefix, "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0",
            "MARQUEE_SESSION_TIMEOUT": "6s", "MARQUEE_SHUTDOWN_TIMEOUT": "2s",
            "MARQUEE_KAFKA_PROPERTIES": "security.protocol=ssl,ssl.ca.location=\(broker.caPath)",
            "MARQUEE_STORE": "sqlite:\(folder)/marquee.db", "MARQUEE_SHARED_LIMITS": "local",
            "MARQUEE_IMAGE_STORE": "file://\(folder)/images",
            "MARQUEE_GROUP": "", "MARQUEE_CONFIG": "",
        ]
        for executable in ["marquee-fetch", "marquee-images", "marquee-index"] {
            let (assigned, signal) = AsyncStream.makeStream(of: Void.self)
            let worker = try ChildProcess(
                executable,
                arguments: [],
                environment: workerEnvironment,
                readsStandardError: true
            ) { line in
                if line.contains("partitions assigned") { signal.yield() }
            }
            let joined: Void? = try? await answer(within: .seconds(60)) {
                var iterator = assigned.makeAsyncIterator()
                await iterator.next()
            }
            #expect(joined != nil, "\(executable) got partitions over TLS")
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(killingAfter: .seconds(30)) == 0, "\(executable) stopped cleanly")
        }

        // The scheduler: it prepares its state topic and checks the fetch topic over TLS before it says it started.
        let schedule = broker.folder.appendingPathComponent("schedule.yaml").path
        try
            "schedules:\n  - name: hourly\n    every: 1h\n    jobs:\n      - kind: tmdb.list\n        list: popular\n        page: 1\n"
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        var producerEnvironment = workerEnvironment
        producerEnvironment["MARQUEE_SCHEDULE"] = schedule
        producerEnvironment["MARQUEE_PRODUCER_GROUP"] = ""
        let producer = try ChildProcess(
            "marquee-producer",
            arguments: [],
            environment: producerEnvironment,
            readsStandardError: true
        ) { line in
            if line.contains("producer started") { startedSignal.yield() }
        }
        let producerStarted: Void? = try? await answer(within: .seconds(60)) {
            var iterator = started.makeAsyncIterator()
            await iterator.next()
        }
        #expect(producerStarted != nil, "marquee-producer started over TLS")
        producer.signal(SIGTERM)
        #expect(await producer.waitForExit(killingAfter: .seconds(30)) == 0, "marquee-producer stopped cleanly")

        // A CA that did not sign the broker's certificate: one line, naming the failed verification.
        let wrong = try await marquee(
            [
                "topics", "list", "--timeout", "3", "-X", "security.protocol=ssl", "-X",
                "ssl.ca.location=\(broker.wrongCAPath)",
            ]
        )
        #expect(wrong.status == 69)
        #expect(wrong.standardError.split(separator: "\n").count == 1, "\(wrong.standardError)")
        #expect(wrong.standardError.contains("certificate verify failed"), "\(wrong.standardError)")
    }
}
