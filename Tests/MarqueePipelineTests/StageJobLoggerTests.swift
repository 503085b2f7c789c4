import Logging
import MarqueeCore
import MarqueeJSON
import Synchronization
import Testing

@testable import MarqueePipeline

@Suite struct StageJobLoggerTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// A job as the stage hands it to its handler, with a stage logger writing JSON lines into `lines`.
    private static func job(_ envelope: Envelope, lines: Lines) -> StageJob {
        var logger = Logger(label: "marquee-fetch") { label in
            JSONLogHandler(label: label) { line in lines.lines.withLock { $0.append(line) } }
        }
        logger.logLevel = .debug
        logger[metadataKey: MarqueeLoggingKeys.stage] = "fetch"
        return StageJob(
            envelope: envelope,
            key: nil,
            payload: Array(#"{"v":1,"kind":"tmdb.movie"}"#.utf8),
            source: "marquee.fetch/1/7",
            context: JobContext(jobID: envelope.id, kind: "tmdb.movie", phase: "handling"),
            stageLogger: logger
        )
    }

    private static func objects(_ lines: Lines) throws -> [JSONObject] {
        try lines.lines.withLock { $0 }.map { line in
            guard case .object(let object) = try JSONValue.parse(Array(line.utf8)) else {
                throw PayloadError(.invalidField, field: "line", "not an object")
            }
            return object
        }
    }

    @Test func everyLineOfAJobCarriesItsTraceIDAndIdentity() throws {
        let lines = Lines()
        let traceparent = TraceContext.make()
        let traceID = try #require(TraceContext.traceID(of: traceparent))
        // A spawned job carries its root's trace.
        let envelope = Envelope.root(traceparent: traceparent).child(
            output: 0,
            stage: "fetch",
            key: "tmdb:movie:550:ko-KR"
        )
        let job = Self.job(envelope, lines: lines)
        job.logger.debug("job done", metadata: [MarqueeLoggingKeys.outputs: "2"])
        job.logger.info("job failed, retrying")
        job.logger.notice("follow-ups left out", metadata: ["marquee.skipped": "x"])

        let written = try Self.objects(lines)
        #expect(written.count == 3)
        for line in written {
            #expect(line[MarqueeLoggingKeys.traceID] == .string(traceID))
            #expect(line[MarqueeLoggingKeys.jobID] == .string(envelope.id.rawValue))
            #expect(line[MarqueeLoggingKeys.attempt] == .string("1"))
            #expect(line[MarqueeLoggingKeys.kind] == .string("tmdb.movie"))
            #expect(line[MarqueeLoggingKeys.source] == .string("marquee.fetch/1/7"))
            #expect(line[MarqueeLoggingKeys.stage] == .string("fetch"), "the stage logger's own metadata stays")
        }
        #expect(MarqueeLoggingKeys.traceID == "trace_id")
    }

    @Test func aJobWithoutATraceparentLogsNoTraceID() throws {
        let lines = Lines()
        for traceparent in [nil, "not-a-traceparent"] {
            Self.job(Envelope.root(traceparent: traceparent), lines: lines).logger.info("job dead-lettered")
        }
        let written = try Self.objects(lines)
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0[MarqueeLoggingKeys.traceID] == nil && $0[MarqueeLoggingKeys.jobID] != nil })
    }
}
