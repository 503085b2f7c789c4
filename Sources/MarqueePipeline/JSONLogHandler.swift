public import Logging
import MarqueeJSON

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
    private let writeLine: @Sendable ([UInt8]) -> Void

    /// A handler writing to standard error.
    public init(label: String) {
        self.label = label
        self.writeLine = { line in _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) } }
    }

    /// A handler writing each line (newline included) with `write`.
    public init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.writeLine = { line in write(String(decoding: line, as: UTF8.self)) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let metadata = event.metadata { merged.merge(metadata) { _, new in new } }
        // The fixed members first, then the metadata by key; DEL escaped too, as the lines are read on terminals.
        var writer = JSONWriter(capacity: 256, keyOrder: .asGiven, escapesDelete: true)
        writer.beginObject()
        writer.write("ts", Self.timestamp())
        writer.write("level", event.level.rawValue)
        writer.write("label", self.label)
        writer.write("msg", event.message.description)
        writer.write("source", event.source)
        for key in merged.keys.sorted() where !Self.fixedKeys.contains(key) {
            writer.key(key)
            Self.write(merged[key]!, to: &writer)
        }
        writer.endObject()
        var line = writer.finish()
        line.append(UInt8(ascii: "\n"))
        self.writeLine(line)
    }

    /// The members every line has, which metadata of the same name does not replace.
    private static let fixedKeys: Set<String> = ["ts", "level", "label", "msg", "source"]

    /// A metadata value: strings as strings, lists as arrays, dictionaries as objects with their keys sorted.
    private static func write(_ value: Logger.MetadataValue, to writer: inout JSONWriter) {
        switch value {
        case .string(let string): writer.write(string: string)
        case .stringConvertible(let convertible): writer.write(string: convertible.description)
        case .array(let values):
            writer.beginArray()
            for value in values { Self.write(value, to: &writer) }
            writer.endArray()
        case .dictionary(let values):
            writer.beginObject()
            for key in values.keys.sorted() {
                writer.key(key)
                Self.write(values[key]!, to: &writer)
            }
            writer.endObject()
        }
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
