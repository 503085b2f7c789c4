import class Foundation.FileHandle
import class Foundation.FileManager
import class Foundation.Process
import class Foundation.ProcessInfo
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// A Kafka-protocol broker owned by one test: the project's tansu (`.deps/bin/tansu`, scripts/setup.sh) on
/// 127.0.0.1 and a free port, in memory, that the test may freeze and thaw (an outage of the broker) while the
/// other suites keep the shared one.
///
/// ```swift
/// let broker = try await BrokerProcess.start()
/// defer { broker.stop() }
/// broker.freeze()   // nothing answers, connections stay open
/// broker.thaw()
/// ```
public final class BrokerProcess: Sendable {
    /// `127.0.0.1:PORT`, for `MARQUEE_BROKERS`.
    public let address: String
    private let process: Process.Sendable

    private init(address: String, process: Process.Sendable) {
        self.address = address
        self.process = process
    }

    /// Starts tansu and waits until it accepts connections.
    ///
    /// - Throws: ``MotoServerProcess/Failure`` when tansu is not installed or does not listen within `timeout`.
    public static func start(timeout: Duration = .seconds(20)) async throws -> BrokerProcess {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let executable = root.appendingPathComponent(".deps/bin/tansu")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw MotoServerProcess.Failure(
                description: "tansu is not installed at \(executable.path): run scripts/setup.sh"
            )
        }
        Self.removeAbandonedBrokers()
        let port = try MotoServerProcess.freePort()
        let process = Process()
        process.executableURL = executable
        // Names the test process that owns it, for ``removeAbandonedBrokers()``.
        var environment = ProcessInfo.processInfo.environment
        environment[Self.ownerVariable] = "\(getpid())"
        process.environment = environment
        process.arguments = [
            "broker", "--listener-url", "tcp://127.0.0.1:\(port)", "--advertised-listener-url",
            "tcp://127.0.0.1:\(port)",
        ]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let broker = BrokerProcess(address: "127.0.0.1:\(port)", process: Process.Sendable(process))
        let deadline = ContinuousClock.now + timeout
        while !Self.accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                broker.stop()
                throw MotoServerProcess.Failure(
                    description: "tansu did not listen on 127.0.0.1:\(port) within \(timeout)"
                )
            }
            try await Task.sleep(for: .milliseconds(100))  // a bounded poll of a starting process
        }
        return broker
    }

    /// Stops the broker (SIGSTOP): connections stay open and nothing answers on them.
    public func freeze() { _ = kill(self.process.value.processIdentifier, SIGSTOP) }

    /// Continues a broker ``freeze()`` stopped.
    public func thaw() { _ = kill(self.process.value.processIdentifier, SIGCONT) }

    /// Kills the broker (it keeps nothing: every topic and offset goes with it).
    public func stop() {
        let process = self.process.value
        guard process.isRunning else { return }
        _ = kill(process.processIdentifier, SIGCONT)
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The variable that names, in a broker's environment, the test process that started it.
    static let ownerVariable = "MARQUEE_TEST_BROKER_OWNER"

    /// Kills the brokers earlier test processes started and left behind when they died (a crash, a time limit, a
    /// `kill -9`): tansu processes whose environment names an owner that is gone. The local stack's broker names
    /// none and is never touched.
    public static func removeAbandonedBrokers() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                String(decoding: command, as: UTF8.self).contains("tansu")
            else { continue }
            let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard
                let owner = variables.first(where: { $0.hasPrefix(Self.ownerVariable + "=") })
                    .flatMap({ Int32($0.dropFirst(Self.ownerVariable.count + 1)) }),
                kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            _ = kill(pid, SIGCONT)
            _ = kill(pid, SIGKILL)
        }
    }

    private static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}

extension Process {
    /// A process handle shared between threads: only its thread-safe members are used (its identifier, whether
    /// it runs, waiting for its exit).
    fileprivate struct Sendable: @unchecked Swift.Sendable {
        let value: Process
        init(_ value: Process) { self.value = value }
    }
}
