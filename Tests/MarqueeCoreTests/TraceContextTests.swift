import MarqueeCore
import Testing

@Suite struct TraceContextTests {
    @Test func aNewTraceparentIsW3CTraceContextWithARandomTraceID() throws {
        let first = TraceContext.make()
        let second = TraceContext.make()
        #expect(first != second)
        let parts = first.split(separator: "-")
        #expect(parts.count == 4 && parts[0] == "00" && parts[3] == "01")
        let traceID = try #require(TraceContext.traceID(of: first))
        #expect(traceID == String(parts[1]) && traceID.count == 32)
        #expect(Envelope.root(traceparent: first).child().traceID == traceID, "children carry their root's trace")
    }

    /// The scheduler's jobs: the same id, the same trace, so a window sent again keeps its trace ids.
    @Test func aSeededTraceparentFollowsItsSeed() throws {
        let first = TraceContext.make(seed: "tick-1764201600000-0")
        #expect(first == TraceContext.make(seed: "tick-1764201600000-0"))
        #expect(TraceContext.traceID(of: first) != nil, "\(first) is W3C trace context")
        let other = TraceContext.make(seed: "tick-1764201600000-1")
        #expect(TraceContext.traceID(of: other) != TraceContext.traceID(of: first))
        #expect(TraceContext.traceID(of: TraceContext.make(seed: "")) != nil)
    }

    @Test(
        arguments: [
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736"),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", "4bf92f3577b34da6a3ce929d0e0e4736"),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", nil),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", nil),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", nil),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", nil),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", nil),
            ("00-abc-def-01", nil),
            ("", nil),
        ] as [(String, String?)]
    )
    func traceIDs(traceparent: String, expected: String?) {
        #expect(TraceContext.traceID(of: traceparent) == expected)
    }
}
