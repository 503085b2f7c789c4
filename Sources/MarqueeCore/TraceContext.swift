/// W3C trace context as the `traceparent` header carries it: `00-<trace id>-<parent id>-<flags>`, where the trace
/// id is 32 lowercase hex digits and the parent id 16 (https://www.w3.org/TR/trace-context/).
///
/// `marquee enqueue` and the scheduler start a trace for each root job; every job it spawns carries the same `traceparent`
/// (``Envelope/child(id:)``), so the trace id ties together every log line of a crawl.
public enum TraceContext {
    /// A new `traceparent`: version 00, a random trace id and parent id, sampled.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var traceID = ""
        repeat {
            traceID = Self.hex(generator.next() as UInt64) + Self.hex(generator.next() as UInt64)
        } while Self.isZero(traceID)
        var parentID = ""
        repeat {
            parentID = Self.hex(generator.next() as UInt64)
        } while Self.isZero(parentID)
        return "00-\(traceID)-\(parentID)-01"
    }

    /// A `traceparent` derived from `seed` (FNV-1a): the same seed gives the same trace, so a job sent again under
    /// its deterministic id (the scheduler's windows) keeps its trace id.
    public static func make(seed: String) -> String {
        func fnv(_ basis: UInt64) -> UInt64 {
            var hash = basis
            for byte in seed.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
            return hash | 1  // never all zero
        }
        return
            "00-\(Self.hex(fnv(0xcbf2_9ce4_8422_2325)))\(Self.hex(fnv(0x8422_2325_cbf2_9ce4)))-\(Self.hex(fnv(0x9e37_79b9_7f4a_7c15)))-01"
    }

    /// The trace id of a `traceparent`, or `nil` when the header is not one (wrong shape, upper-case or non-hex
    /// digits, an all-zero id, version `ff`).
    public static func traceID(of traceparent: String) -> String? {
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", parts[1].count == 32, parts[2].count == 16,
            parts[3].count == 2, parts.prefix(4).allSatisfy({ $0.utf8.allSatisfy(Self.isLowerHex) }),
            !Self.isZero(parts[1]), !Self.isZero(parts[2])
        else { return nil }
        // Version 00 has exactly four parts; a later version may append more.
        guard parts[0] != "00" || parts.count == 4 else { return nil }
        return String(parts[1])
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func isZero(_ text: some StringProtocol) -> Bool { text.utf8.allSatisfy { $0 == UInt8(ascii: "0") } }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

extension Envelope {
    /// The trace id of the job's `traceparent`, or `nil` when it has none (or one that is not W3C trace context).
    public var traceID: String? { self.traceparent.flatMap { TraceContext.traceID(of: $0) } }
}
