import Synchronization

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.FileManager
import class Foundation.Pipe
import class Foundation.Process
import class Foundation.ProcessInfo
import struct Foundation.URL

#if canImport(FoundationNetworking)
import class FoundationNetworking.URLSession
import class FoundationNetworking.URLSessionConfiguration
import class FoundationNetworking.HTTPURLResponse
import struct FoundationNetworking.URLRequest
#endif

#if canImport(Glibc)
import Glibc
#endif

/// moto's S3 server (PyPI `moto[server]`, installed into `.deps/venv` by `scripts/setup.sh`) run as a child
/// process for a test, on 127.0.0.1 and a free port.
///
/// moto accepts any credentials until ``enableAuthentication()``; from then on it checks SigV4 signatures against
/// the IAM users created with ``createUser(_:)`` (and their policies), so signing is tested for real.
///
/// ```swift
/// let moto = try await MotoServerProcess.start()
/// defer { moto.terminate() }
/// let keys = try await moto.createUser("marquee")   // s3:* allowed
/// try await moto.enableAuthentication()
/// // s3://bucket?endpoint=\(moto.endpoint) with AWS_ACCESS_KEY_ID=keys.accessKeyID …
/// ```
public final class MotoServerProcess: Sendable {
    /// A failure to start moto or to talk to its admin endpoints.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The port moto listens on.
    public let port: Int
    private let process: Process

    private init(endpoint: String, port: Int, process: Process) {
        self.endpoint = endpoint
        self.port = port
        self.process = process
    }

    /// The `moto_server` executable: `MARQUEE_MOTO_SERVER`, else `.deps/venv/bin/moto_server` in the current
    /// folder or in a folder above the test bundle.
    public static var executablePath: String? {
        if let path = ProcessInfo.processInfo.environment["MARQUEE_MOTO_SERVER"] { return path }
        var candidates = [FileManager.default.currentDirectoryPath]
        var folder = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(folder.path)
            folder = folder.deletingLastPathComponent()
        }
        return candidates.map { $0 + "/.deps/venv/bin/moto_server" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Starts moto on a free port of 127.0.0.1 and returns once it listens.
    ///
    /// - Parameter timeout: How long to wait for moto's listening line.
    /// - Throws: ``Failure`` when `moto_server` is missing (run `scripts/setup.sh`), exits, or stays silent.
    public static func start(timeout: Duration = .seconds(60)) async throws -> MotoServerProcess {
        guard let executable = Self.executablePath else {
            throw Failure(description: "moto_server not found in .deps/venv/bin (run scripts/setup.sh)")
        }
        var lastError: (any Error)?
        // The port is free when chosen but could be taken before moto binds it; try a few.
        for _ in 0..<3 {
            let port = try Self.freePort()
            do {
                return try await Self.start(executable: executable, port: port, timeout: timeout)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? Failure(description: "moto did not start")
    }

    /// Starts moto on `port` of 127.0.0.1 (a port a test chose before, with ``freePort()``) and returns once it
    /// listens: an S3 endpoint that comes up while a worker already uses it.
    ///
    /// - Throws: ``Failure`` when `moto_server` is missing, exits (the port is taken), or stays silent.
    public static func start(port: Int, timeout: Duration = .seconds(60)) async throws -> MotoServerProcess {
        guard let executable = Self.executablePath else {
            throw Failure(description: "moto_server not found in .deps/venv/bin (run scripts/setup.sh)")
        }
        return try await Self.start(executable: executable, port: port, timeout: timeout)
    }

    private static func start(executable: String, port: Int, timeout: Duration) async throws -> MotoServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-H", "127.0.0.1", "-p", "\(port)"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "INITIAL_NO_AUTH_ACTION_COUNT")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let ready = ReadySignal()
        let buffer = Mutex<[UInt8]>([])
        // werkzeug prints " * Running on http://127.0.0.1:PORT" once it listens, then one line per request: keep
        // reading for the life of the process so moto never blocks on a full pipe.
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                ready.finish(false)
                return
            }
            let listening = buffer.withLock { buffer -> Bool in
                buffer.append(contentsOf: data)
                if buffer.count > 64 * 1024 { buffer.removeFirst(buffer.count - 64 * 1024) }
                return String(decoding: buffer, as: UTF8.self).contains("Running on http://127.0.0.1:\(port)")
            }
            if listening { ready.finish(true) }
        }
        process.terminationHandler = { _ in ready.finish(false) }
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start \(executable): \(error)")
        }
        let listening = try await ready.wait(timeout: timeout)
        guard listening else {
            if process.isRunning { process.terminate() }
            let output = buffer.withLock { String(decoding: $0.suffix(2000), as: UTF8.self) }
            throw Failure(description: "moto_server did not start on port \(port): \(output)")
        }
        return MotoServerProcess(endpoint: "http://127.0.0.1:\(port)", port: port, process: process)
    }

    /// Creates an IAM user allowed `s3:*`, with an access key; call before ``enableAuthentication()``.
    ///
    /// - Parameter name: The user name.
    /// - Returns: The user's access key ID and secret.
    public func createUser(_ name: String) async throws -> (accessKeyID: String, secretAccessKey: String) {
        _ = try await self.iam(["Action": "CreateUser", "UserName": name])
        let created = try await self.iam(["Action": "CreateAccessKey", "UserName": name])
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        _ = try await self.iam([
            "Action": "PutUserPolicy", "UserName": name, "PolicyName": "marquee-s3", "PolicyDocument": policy,
        ])
        guard let id = Self.element("AccessKeyId", in: created),
            let secret = Self.element("SecretAccessKey", in: created)
        else { throw Failure(description: "CreateAccessKey answered without a key: \(created)") }
        return (id, secret)
    }

    /// From now on moto checks every request's signature and the signer's policies (`/moto-api/reset-auth`).
    public func enableAuthentication() async throws {
        // text/plain: werkzeug would parse a form body (URLSession's default type) and hide it from moto.
        _ = try await self.call("/moto-api/reset-auth", body: Data("0".utf8), headers: ["Content-Type": "text/plain"])
    }

    /// Stops moto and waits for it to exit.
    ///
    /// SIGKILL: moto keeps everything in memory, so there is nothing to shut down cleanly, and a child started
    /// from the test process inherits its signal mask, in which SIGTERM is blocked (moto would never see it).
    public func terminate() {
        guard self.process.isRunning else { return }
        kill(self.process.processIdentifier, SIGKILL)
        self.process.waitUntilExit()
    }

    // MARK: - Admin calls

    /// An IAM query-API call. The fake SigV4 scope routes it to moto's IAM; moto does not check it before
    /// ``enableAuthentication()``.
    private func iam(_ parameters: [String: String]) async throws -> String {
        var form = parameters
        form["Version"] = "2010-05-08"
        let body = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.formEncoded($0.value))" }.joined(
            separator: "&"
        )
        return try await self.call(
            "/",
            body: Data(body.utf8),
            headers: [
                "Content-Type": "application/x-www-form-urlencoded",
                "Authorization":
                    "AWS4-HMAC-SHA256 Credential=admin/20240101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0",
            ]
        )
    }

    private func call(_ path: String, body: Data, headers: [String: String]) async throws -> String {
        guard let url = URL(string: self.endpoint + path) else { throw Failure(description: "bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let text = String(decoding: data, as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw Failure(description: "POST \(path) failed: \(text)")
        }
        return text
    }

    private static func element(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"),
            let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    private static func formEncoded(_ value: String) -> String {
        var text = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                text.append(Character(Unicode.Scalar(byte)))
            default:
                text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text
    }

    /// A TCP port on 127.0.0.1 that is free now (bound to port 0, read, closed).
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw Failure(description: "bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw Failure(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Whether the server came up: set once (listening, or the output ended first); awaited with a deadline.
private final class ReadySignal: Sendable {
    private let state = Mutex<(done: Bool, value: Bool, waiter: CheckedContinuation<Bool, Never>?)>((false, false, nil))

    func finish(_ value: Bool) {
        let waiter: CheckedContinuation<Bool, Never>? = self.state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    func wait(timeout: Duration) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready: (Bool, Bool) = self.state.withLock { state in
                        if state.done { return (true, state.value) }
                        state.waiter = continuation
                        return (false, false)
                    }
                    if ready.0 { continuation.resume(returning: ready.1) }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)  // a deadline, not synchronisation
                throw MotoServerProcess.Failure(description: "moto_server not listening after \(timeout)")
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? false
            } catch {
                self.finish(false)  // release the waiting task
                throw error
            }
        }
    }
}
