import Synchronization

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.JSONSerialization
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

/// A `marquee-upstream` emulator run as a child process for a test: started with `--port 0`, ready once it
/// printed its listening line.
///
/// ```swift
/// let upstream = try await UpstreamEmulatorProcess.start(arguments: ["--seed", "7", "--movies", "200"])
/// defer { upstream.terminate() }
/// // point the fetch worker at upstream.tmdbBaseURL, upstream.koficBaseURL, …
/// ```
public final class UpstreamEmulatorProcess: Sendable {
    /// A failure to start the emulator or to talk to its control endpoints.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    private let process: Process
    private let output: Pipe

    /// `<baseURL>/tmdb/3` (`TMDB_BASE_URL`).
    public var tmdbBaseURL: String { self.baseURL + "/tmdb/3" }
    /// `<baseURL>/tmdb-images/t/p` (`TMDB_IMAGE_BASE_URL`).
    public var tmdbImageBaseURL: String { self.baseURL + "/tmdb-images/t/p" }
    /// `<baseURL>/tmdb-files/p/exports` (`TMDB_EXPORT_BASE_URL`).
    public var tmdbExportBaseURL: String { self.baseURL + "/tmdb-files/p/exports" }
    /// `<baseURL>/kofic/kobisopenapi/webservice/rest` (`KOFIC_BASE_URL`).
    public var koficBaseURL: String { self.baseURL + "/kofic/kobisopenapi/webservice/rest" }
    /// `<baseURL>/kakao` (`KAKAO_BASE_URL`).
    public var kakaoBaseURL: String { self.baseURL + "/kakao" }
    /// `<baseURL>/openlibrary` (`OPENLIBRARY_BASE_URL`).
    public var openLibraryBaseURL: String { self.baseURL + "/openlibrary" }
    /// `<baseURL>/covers` (`OPENLIBRARY_COVERS_BASE_URL`).
    public var openLibraryCoversBaseURL: String { self.baseURL + "/covers" }

    private init(baseURL: String, process: Process, output: Pipe) {
        self.baseURL = baseURL
        self.process = process
        self.output = output
    }

    /// Starts `marquee-upstream` from the build folder (next to the test bundle) with `arguments` plus
    /// `--port 0`, and waits for its listening line.
    ///
    /// - Parameters:
    ///   - arguments: Flags, e.g. `["--seed", "7", "--rate-limit", "40"]`.
    ///   - timeout: How long to wait for the listening line.
    /// - Throws: ``Failure`` when the binary is missing, exits, or stays silent past `timeout`.
    public static func start(
        arguments: [String] = [],
        timeout: Duration = .seconds(30)
    ) async throws
        -> UpstreamEmulatorProcess
    {
        let executable = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
            .deletingLastPathComponent()
            .appendingPathComponent("marquee-upstream")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments + ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        let line = LineWaiter()
        let buffer = Mutex<[UInt8]>([])
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                line.finish(nil)
                return
            }
            let first: String? = buffer.withLock { buffer in
                buffer.append(contentsOf: data)
                guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            if let first { line.finish(first) }
        }
        process.terminationHandler = { _ in line.finish(nil) }
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start \(executable.path) (build it with `swift build`): \(error)")
        }
        let listening = try await line.wait(timeout: timeout)
        output.fileHandleForReading.readabilityHandler = nil
        guard let listening,
            let object = try? JSONSerialization.jsonObject(with: Data(listening.utf8)) as? [String: Any],
            object["event"] as? String == "listening", let url = object["url"] as? String
        else {
            if process.isRunning { process.terminate() }
            throw Failure(description: "marquee-upstream did not print its listening line (got: \(listening ?? "EOF"))")
        }
        return UpstreamEmulatorProcess(baseURL: url, process: process, output: output)
    }

    /// `GET /_stats` as decoded JSON (see docs/upstream.md for the shape).
    public func stats() async throws -> [String: Any] {
        try await self.call("GET", "/_stats", body: nil)
    }

    /// `POST /_stats/reset`.
    public func resetStats() async throws {
        _ = try await self.call("POST", "/_stats/reset", body: nil)
    }

    /// `POST /_control` with `json` (e.g. `["tmdbKey": "other", "fault5xx": 0.1]`); returns the new settings.
    @discardableResult
    public func control(_ json: [String: Any]) async throws -> [String: Any] {
        try await self.call("POST", "/_control", body: try JSONSerialization.data(withJSONObject: json))
    }

    /// `POST /_control {"outage": …}`: every request to `upstream` (`"tmdb"`, `"kofic"` …, or `"all"`) is answered
    /// 503 in that upstream's shape for `seconds`; 0 ends an outage at once. Returns the new settings, with the
    /// outage under `outage`.
    @discardableResult
    public func outage(_ upstream: String, seconds: Double) async throws -> [String: Any] {
        try await self.control(["outage": ["upstream": upstream, "seconds": seconds] as [String: Any]])
    }

    /// `PUT /_files/<name>`: the emulator then serves `bytes` at ``fileURL(_:)`` with `contentType`, whatever
    /// they hold (hostile images for the image worker's tests). At most 1 MiB.
    public func putFile(_ name: String, _ bytes: [UInt8], contentType: String) async throws {
        _ = try await self.call("PUT", "/_files/\(name)", body: Data(bytes), contentType: contentType)
    }

    /// Where ``putFile(_:_:contentType:)`` serves a file.
    public func fileURL(_ name: String) -> String { self.baseURL + "/_files/" + name }

    /// Stops the emulator (SIGTERM) and waits for it to exit.
    public func terminate() {
        guard self.process.isRunning else { return }
        self.process.terminate()
        self.process.waitUntilExit()
    }

    private func call(
        _ method: String,
        _ path: String,
        body: Data?,
        contentType: String? = nil
    ) async throws -> [String: Any] {
        guard let url = URL(string: self.baseURL + path) else { throw Failure(description: "bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200,
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw Failure(description: "\(method) \(path) failed: \(String(decoding: data, as: UTF8.self))")
        }
        return object
    }
}

/// The first line of output, or nil at end of output; waits with a deadline.
private final class LineWaiter: Sendable {
    private let state = Mutex<(done: Bool, line: String?, waiter: CheckedContinuation<String?, Never>?)>(
        (false, nil, nil)
    )

    func finish(_ line: String?) {
        let waiter: CheckedContinuation<String?, Never>? = self.state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            state.line = line
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: line)
    }

    func wait(timeout: Duration) async throws -> String? {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready: (Bool, String?) = self.state.withLock { state in
                        if state.done { return (true, state.line) }
                        state.waiter = continuation
                        return (false, nil)
                    }
                    if ready.0 { continuation.resume(returning: ready.1) }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)  // a deadline, not synchronisation
                throw UpstreamEmulatorProcess.Failure(description: "marquee-upstream not listening after \(timeout)")
            }
            defer { group.cancelAll() }
            do {
                let line = try await group.next() ?? nil
                return line
            } catch {
                self.finish(nil)  // release the waiting task
                throw error
            }
        }
    }
}
