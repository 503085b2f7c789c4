public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler that writes one JSON object per line: what log shippers (Loki, Elasticsearch, Cloud
/// Logging) read without parsing rules.
///
/// `{"ts":"2026-11-22T09:30:00.123Z","level":"warning","label":"marquee-fetch","msg":"job failed, retrying",
/// "source":"MarqueePipeline","marquee.job.id":"01…","marquee.job.attempt":"2",…}`
///
/// Metadata values are strings (lists and dictionaries are rendered as JSON values).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler writing to standard error.
    public init(label: String) {
        self.init(label: label) { line in
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
    }

    /// A handler writing each line (newline included) with `write`.
    public init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let metadata = event.metadata { merged.merge(metadata) { _, new in new } }
        var line = "{\"ts\":\(Self.quoted(Self.timestamp())),\"level\":\(Self.quoted(event.level.rawValue))"
        line += ",\"label\":\(Self.quoted(self.label)),\"msg\":\(Self.quoted(event.message.description))"
        line += ",\"source\":\(Self.quoted(event.source))"
        for key in merged.keys.sorted() where !["ts", "level", "label", "msg", "source"].contains(key) {
            line += ",\(Self.quoted(key)):\(Self.json(merged[key]!))"
        }
        line += "}\n"
        self.write(line)
    }

    static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string): Self.quoted(string)
        case .stringConvertible(let convertible): Self.quoted(convertible.description)
        case .array(let values): "[" + values.map(Self.json).joined(separator: ",") + "]"
        case .dictionary(let values):
            "{" + values.keys.sorted().map { "\(Self.quoted($0)):\(Self.json(values[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// UTC, ISO 8601 with milliseconds.
    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(spec.tv_nsec / 1_000_000), 3))Z"
    }
}
