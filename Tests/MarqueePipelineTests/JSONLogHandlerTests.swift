import Logging
import MarqueeCore
import MarqueeJSON
import MarqueePipeline
import Synchronization
import Testing

@Suite struct JSONLogHandlerTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    @Test func eachEventIsOneJSONObjectWithItsMetadata() throws {
        let lines = Lines()
        var logger = Logger(label: "marquee-fetch") { label in
            JSONLogHandler(label: label) { line in lines.lines.withLock { $0.append(line) } }
        }
        logger[metadataKey: "marquee.job.id"] = "01ABC"
        logger.warning("job failed: \"503\"\nretrying", metadata: ["marquee.job.attempt": "2", "tags": ["a", "b"]])
        logger.debug("not written at info")

        let written = lines.lines.withLock { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.hasSuffix("}\n") && line.dropLast().contains("\n") == false, "one line")
        let json = try JSONValue.parse(Array(line.utf8))
        guard case .object(let object) = json else {
            Issue.record("not an object")
            return
        }
        #expect(object["level"] == .string("warning"))
        #expect(object["label"] == .string("marquee-fetch"))
        #expect(object["msg"] == .string("job failed: \"503\"\nretrying"))
        #expect(object["marquee.job.id"] == .string("01ABC"))
        #expect(object["marquee.job.attempt"] == .string("2"))
        #expect(object["tags"] == .array([.string("a"), .string("b")]))
        if case .string(let ts) = object["ts"] {
            #expect(ts.count == 24 && ts.hasSuffix("Z"))
        } else {
            Issue.record("no ts")
        }
    }

    @Test func controlCharactersAreEscapedAndSurviveARoundTrip() throws {
        let lines = Lines()
        let logger = Logger(label: "x") { label in
            JSONLogHandler(label: label) { line in lines.lines.withLock { $0.append(line) } }
        }
        let message = "a\u{01}b\u{7F}c\\d"
        logger.info("\(message)")
        let line = try #require(lines.lines.withLock { $0.first })
        #expect(line.contains(#"a\u0001b\u007fc\\d"#))
        let json = try JSONValue.parse(Array(line.utf8))
        guard case .object(let object) = json else {
            Issue.record("not an object")
            return
        }
        #expect(object["msg"] == .string(message))
    }
}
