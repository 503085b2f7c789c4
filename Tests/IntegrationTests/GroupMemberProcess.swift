import Synchronization
import Testing

import class Foundation.FileHandle
import class Foundation.Pipe
import class Foundation.Process
import class Foundation.ProcessInfo
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// What the group members reported: which member processed which ids, from which partitions.
struct GroupReport: Sendable, CustomStringConvertible {
    var processed: [String: Set<Int>] = [:]
    var partitions: [String: Set<Int32>] = [:]
    var lines: [String: Int] = [:]

    var allProcessed: Set<Int> { self.processed.values.reduce(into: Set()) { $0.formUnion($1) } }

    var description: String {
        "processed: \(self.allProcessed.count), lines per member: \(self.lines), partitions per member: \(self.partitions)"
    }
}

typealias GroupObserver = Observed<GroupReport>

extension Observed where Snapshot == GroupReport {
    convenience init() { self.init(GroupReport()) }

    /// Records one `<partition> <id>` line of a member.
    func record(member: String, line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let partition = Int32(parts[0]), let id = Int(parts[1]) else { return }
        self.update { report in
            report.processed[member, default: []].insert(id)
            report.partitions[member, default: []].insert(partition)
            report.lines[member, default: 0] += 1
        }
    }
}

/// A helper executable built next to the test bundle, run as a child process; its standard output arrives
/// line by line.
final class ChildProcess: Sendable {
    private let process: Process
    /// Kept alive as long as the child: Foundation's readability handler must not outlive its pipe.
    private let output: Pipe
    private let exit = ExitState()

    private final class ExitState: Sendable {
        let state = Mutex<(status: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))
    }

    /// - Parameters:
    ///   - executable: The product name, e.g. `KafkaGroupMember`.
    ///   - environment: Variables added to the test's environment.
    ///   - readsStandardError: Deliver standard error's lines instead of standard output's (for processes that
    ///     log there).
    ///   - onLine: Called for each complete line, on a background thread.
    init(
        _ executable: String,
        arguments: [String],
        environment: [String: String] = [:],
        readsStandardError: Bool = false,
        onLine: @escaping @Sendable (Substring) -> Void
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
            .deletingLastPathComponent()
            .appendingPathComponent(executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        if readsStandardError {
            process.standardError = output
        } else {
            process.standardOutput = output
        }
        let buffer = Mutex<[UInt8]>([])
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { return }  // end of output
            let lines: [Substring] = buffer.withLock { buffer in
                buffer.append(contentsOf: data)
                guard let last = buffer.lastIndex(of: 0x0A) else { return [] }
                let complete = String(decoding: buffer[...last], as: UTF8.self)
                buffer.removeSubrange(...last)
                return complete.split(separator: "\n")
            }
            for line in lines { onLine(line) }
        }
        self.process = process
        self.output = output
        process.terminationHandler = { [exit = self.exit] process in
            let status = process.terminationStatus
            let waiter = exit.state.withLock { state in
                state.status = status
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: status)
        }
        try process.run()
    }

    deinit {
        self.output.fileHandleForReading.readabilityHandler = nil
    }

    /// Sends `signal` while the child runs (never to a pid the system may have reused since it exited).
    func signal(_ signal: Int32) {
        guard self.process.isRunning else { return }
        _ = kill(self.process.processIdentifier, signal)
    }

    /// The child's peak resident set size (`VmHWM` in /proc), in bytes, while it runs.
    var peakResidentBytes: Int? {
        guard
            let status = try? String(contentsOfFile: "/proc/\(self.process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// The exit status; when the child has not exited within `limit`, it is killed (SIGKILL) and that is the status.
    func waitForExit(killingAfter limit: Duration) async -> Int32 {
        let killer = Task {
            try await Task.sleep(for: limit)
            self.signal(SIGKILL)
        }
        defer { killer.cancel() }
        return await self.waitForExit()
    }

    /// The exit status once the child exited, `nil` while it runs.
    var exitStatus: Int32? { self.exit.state.withLock { $0.status } }

    /// The exit status (or the signal that ended it).
    func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status: Int32? = self.exit.state.withLock { state in
                if let status = state.status { return status }
                state.waiter = continuation
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }
}

/// A `KafkaGroupMember` process whose output lines feed a ``GroupObserver``.
final class GroupMemberProcess: Sendable {
    let name: String
    private let child: ChildProcess

    init(name: String, group: String, topic: String, brokers: String, observer: GroupObserver) throws {
        self.name = name
        self.child = try ChildProcess("KafkaGroupMember", arguments: [brokers, group, topic, "/dev/null"]) { line in
            observer.record(member: name, line: line)
        }
    }

    func signal(_ signal: Int32) { self.child.signal(signal) }

    func waitForExit() async -> Int32 { await self.child.waitForExit() }
}
