public import Foundation

/// What a finished command printed and how it exited.
public struct CommandRun: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs an executable built next to the test bundle (`marquee`, `marquee-index` …) to its end: standard input
/// empty, both outputs captured (through files, so a large output cannot block the child), the test's
/// environment with `environment` applied (`nil` values remove a variable).
public func runBuiltExecutable(
    _ name: String,
    _ arguments: [String],
    environment: [String: String?] = [:]
) async throws -> CommandRun {
    let executable = builtExecutablesFolder.appendingPathComponent(name)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
        throw BuiltExecutableMissing(path: executable.path)
    }
    return try await runCommand(executable, arguments, environment: environment)
}

/// Where the package's executables were built: next to the test bundle (`.build/debug`).
public var builtExecutablesFolder: URL {
    URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
}

/// Runs `executable` to its end, as ``runBuiltExecutable(_:_:environment:)`` does, optionally in another
/// working directory.
public func runCommand(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String?] = [:],
    currentDirectory: URL? = nil
) async throws -> CommandRun {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        TestEnvironment.uniqueName("marquee-run")
    )
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outputs = [folder.appendingPathComponent("stdout"), folder.appendingPathComponent("stderr")]
    for url in outputs { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    var merged = ProcessInfo.processInfo.environment
    for (name, value) in environment { merged[name] = value }
    process.environment = merged
    let output = try FileHandle(forWritingTo: outputs[0])
    let error = try FileHandle(forWritingTo: outputs[1])
    defer {
        try? output.close()
        try? error.close()
    }
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    let texts = outputs.map { String(decoding: FileManager.default.contents(atPath: $0.path) ?? Data(), as: UTF8.self) }
    return CommandRun(status: status, standardOutput: texts[0], standardError: texts[1])
}

/// The executable is not built: the tests need `swift build --build-tests` first.
public struct BuiltExecutableMissing: Error, CustomStringConvertible {
    public var path: String
    public var description: String { "the executable is missing: swift build --build-tests (\(self.path))" }
}
