/// The `kind` of a payload, read without decoding it: for metric labels and log lines about jobs whose payload
/// the stage itself does not decode.
public enum PayloadKind {
    /// Every kind a Marquee topic carries: fetch jobs, image jobs and records.
    public static let known: Set<String> = Set(FetchJob.kinds + [ImageJob.kind] + Record.Kind.allCases.map(\.rawValue))

    /// The label for payloads whose kind is missing or not one of ``known`` (metric labels stay a bounded set).
    public static let unknown = "unknown"

    /// The top-level `"kind"` string of a JSON object, when it is one of ``known``; otherwise ``unknown``.
    ///
    /// A single pass over the bytes that tracks nesting and strings, so a `"kind"` inside nested data is not
    /// taken for the payload's. Escaped kind strings are not unescaped (no known kind needs escapes).
    public static func peek(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { self.peek($0) } ?? Self.unknown
    }

    private static func peek(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var depth = 0
        var index = 0
        // The last top-level string ended at `index` and may be a key: its range.
        var lastString: Range<Int>?
        var expectingValueOfKind = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case quote:
                let start = index + 1
                var end = start
                while end < bytes.count, bytes[end] != quote {
                    end += bytes[end] == backslash ? 2 : 1
                }
                guard end < bytes.count else { return nil }
                if depth == 1 {
                    if expectingValueOfKind {
                        let value = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                        return self.known.contains(value) ? value : nil
                    }
                    lastString = start..<end
                }
                index = end + 1
                continue
            case UInt8(ascii: ":"):
                if depth == 1, let key = lastString {
                    expectingValueOfKind = bytes[key].elementsEqual("kind".utf8)
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if expectingValueOfKind { return nil }  // "kind" is not a string
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                if expectingValueOfKind { return nil }
                lastString = nil
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
