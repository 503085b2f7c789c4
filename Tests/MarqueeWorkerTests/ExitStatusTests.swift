import Foundation
import MarqueeKafka
import MarqueeWorker
import Testing

@Suite struct ExitStatusTests {
    /// docs/operating.md holds the table of exit statuses as ``MarqueeWorker/ExitStatus`` declares them.
    @Test func theDocumentedExitStatusesAreTheDeclarations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/operating.md"), encoding: .utf8)
        let begin =
            "<!-- exit statuses: generated from ExitStatus; swift test --filter theDocumentedExitStatusesAreTheDeclarations -->\n"
        let end = "\n<!-- end of the exit statuses -->"
        let start = try #require(text.range(of: begin), "docs/operating.md has the table's opening marker")
        let stop = try #require(text.range(of: end, range: start.upperBound..<text.endIndex))
        #expect(
            String(text[start.upperBound..<stop.lowerBound]) == MarqueeWorker.ExitStatus.markdownTable,
            "docs/operating.md's exit statuses differ from the declarations; they should read:\n\(MarqueeWorker.ExitStatus.markdownTable)"
        )
    }

    /// One cause, one status: a Kafka failure exits the same in every command.
    @Test(arguments: [
        (KafkaError.Code.brokerUnreachable, MarqueeWorker.ExitStatus.unavailable), (.timedOut, .unavailable),
        (.configuration, .configuration), (.admin, .protocolError), (.delivery, .protocolError),
        (.commit, .protocolError), (.cancelled, .failure), (.unsupportedLibraryVersion, .software),
    ])
    func kafkaFailuresHaveOneStatusEach(code: KafkaError.Code, status: MarqueeWorker.ExitStatus) {
        #expect(MarqueeWorker.ExitStatus(KafkaError(code: code, reason: "r")) == status)
    }

    /// A delivery that timed out because no broker answered is unavailability, not a refusal.
    @Test func aDeliveryWithoutABrokerIsUnavailability() {
        let timedOut = KafkaError(code: .delivery, reason: "r", rdKafkaCode: .messageTimedOut)
        #expect(MarqueeWorker.ExitStatus(timedOut) == .unavailable)
    }

    @Test func theStatusesAreSysexits() {
        #expect(MarqueeWorker.ExitStatus.usage.rawValue == 64)
        #expect(MarqueeWorker.ExitStatus.unavailable.rawValue == 69)
        #expect(MarqueeWorker.ExitStatus.configuration.rawValue == 78)
        #expect(Set(MarqueeWorker.ExitStatus.allCases.map(\.meaning)).count == MarqueeWorker.ExitStatus.allCases.count)
    }
}
