import Foundation
import Testing

/// The rule of docs/concurrency.md, "Kafka clients": no librdkafka call while a lock is held in MarqueeKafka.
///
/// A textual audit of Sources/MarqueeKafka: no closure passed to `withLock`/`withLockIfAvailable` names a
/// librdkafka function, and the state machines (whose methods are what runs under the clients' locks) cannot
/// call librdkafka at all, as they do not import it.
@Suite struct LockAuditTests {
    private static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/MarqueeKafka")

    /// Every Swift file of MarqueeKafka with comments removed.
    private static func files() throws -> [(name: String, code: String)] {
        let enumerator = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var files: [(String, String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                guard let comment = line.range(of: "//") else { return String(line) }
                return String(line[..<comment.lowerBound])
            }.joined(separator: "\n")
            files.append((url.lastPathComponent, code))
        }
        return files
    }

    /// The body of each closure passed to a lock, by matching braces from the call.
    private static func lockedBodies(_ code: String) -> [Substring] {
        var bodies: [Substring] = []
        var searchStart = code.startIndex
        while let call = code.range(of: "withLock", range: searchStart..<code.endIndex) {
            searchStart = call.upperBound
            guard let open = code[call.upperBound...].firstIndex(of: "{") else { break }
            var depth = 0
            var index = open
            while index < code.endIndex {
                if code[index] == "{" { depth += 1 }
                if code[index] == "}" {
                    depth -= 1
                    if depth == 0 { break }
                }
                index = code.index(after: index)
            }
            bodies.append(code[open..<min(index, code.endIndex)])
        }
        return bodies
    }

    @Test func noLockedClosureCallsLibrdkafka() throws {
        let files = try Self.files()
        #expect(files.count > 20)
        var checked = 0
        for (name, code) in files {
            for body in Self.lockedBodies(code) {
                checked += 1
                #expect(
                    !body.contains("rd_kafka_"),
                    "\(name): a lock is held around a librdkafka call: \(body.prefix(200))"
                )
            }
        }
        #expect(checked > 30)
    }

    @Test func theStateMachinesCannotCallLibrdkafka() throws {
        let machines = try Self.files().filter { $0.name.hasSuffix("StateMachine.swift") }
        #expect(machines.map(\.name).sorted() == ["ConsumerStateMachine.swift", "ProducerStateMachine.swift"])
        for (name, code) in machines {
            #expect(!code.contains("Crdkafka"), "\(name) imports librdkafka")
            #expect(!code.contains("rd_kafka_"), "\(name) names a librdkafka function")
        }
    }
}
