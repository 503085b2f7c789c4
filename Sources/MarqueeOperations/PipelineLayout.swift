public import MarqueePipeline

import struct Foundation.Data
import class Foundation.FileManager

/// What the operator tools know of a running pipeline: its stages, their topics and consumer groups, the
/// partitions to create, and where each worker serves `/metrics` and `/readyz`.
///
/// It comes from the same `MARQUEE_*` names the workers read (so a shell or a compose file that configures the
/// workers configures the tools too), optionally from a file of such lines (`--config`, `MARQUEE_CONFIG`);
/// the environment overrides the file.
public struct PipelineLayout: Sendable, Hashable {
    /// One stage: its topics, the consumer group of its workers, and their observability addresses.
    public struct Stage: Sendable, Hashable {
        public var topics: StageTopics
        /// The workers' consumer group (`marquee-<stage>`).
        public var group: String
        /// `host:port` of each worker's `/metrics`, `/healthz` and `/readyz`.
        public var workers: [String]

        public var name: String { self.topics.stage }
    }

    /// The stage names, in pipeline order.
    public static let stageNames = ["fetch", "images", "records"]
    /// Each worker's default observability port (as `marquee-fetch`, `marquee-images`, `marquee-index` use).
    public static let defaultPorts = ["fetch": 9101, "images": 9102, "records": 9103]

    public var prefix: String
    /// Partitions of each topic `marquee topics create` makes.
    public var partitions: Int
    public var replicationFactor: Int
    public var stages: [Stage]

    /// The stage of this name, if the pipeline has one.
    public func stage(_ name: String) -> Stage? { self.stages.first { $0.name == name } }

    /// The stage a topic belongs to (main, retry tier or dead letters), if any.
    public func stage(ofTopic topic: String) -> Stage? {
        self.stages.first { $0.topics.all.contains(topic) }
    }

    /// A layout from `MARQUEE_*` settings.
    ///
    /// - `MARQUEE_TOPIC_PREFIX` (default `marquee.`)
    /// - `MARQUEE_RETRY_DELAYS` (its number of delays is the number of retry tiers; default 3 tiers)
    /// - `MARQUEE_TOPIC_PARTITIONS` (default 8), `MARQUEE_REPLICATION_FACTOR` (default 1)
    /// - `MARQUEE_GROUP_FETCH`, `MARQUEE_GROUP_IMAGES`, `MARQUEE_GROUP_RECORDS` (default `marquee-<stage>`)
    /// - `MARQUEE_WORKERS`: `stage=host:port` pairs, comma-separated, a stage named once per worker
    ///   (default `fetch=127.0.0.1:9101,images=127.0.0.1:9102,records=127.0.0.1:9103`)
    ///
    /// - Throws: ``LayoutError`` naming the setting and what is wrong with it.
    public init(settings: [String: String]) throws(LayoutError) {
        self.prefix = settings["MARQUEE_TOPIC_PREFIX"] ?? "marquee."
        guard !self.prefix.isEmpty, self.prefix.allSatisfy(Self.isTopicCharacter) else {
            throw LayoutError("MARQUEE_TOPIC_PREFIX: '\(self.prefix)' may hold only letters, digits, '.', '_' and '-'")
        }
        let tiers: Int
        if let delays = settings["MARQUEE_RETRY_DELAYS"] {
            tiers = delays.split(separator: ",").count
            guard (1...10).contains(tiers) else { throw LayoutError("MARQUEE_RETRY_DELAYS: give 1 to 10 delays, e.g. 10s,1m,10m") }
        } else {
            tiers = 3
        }
        self.partitions = try Self.positive(settings, "MARQUEE_TOPIC_PARTITIONS", default: 8)
        self.replicationFactor = try Self.positive(settings, "MARQUEE_REPLICATION_FACTOR", default: 1)

        var workers: [String: [String]] = [:]
        if let text = settings["MARQUEE_WORKERS"] {
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0.filter { !$0.isWhitespace }) }
                guard parts.count == 2, Self.stageNames.contains(parts[0]), Self.isAddress(parts[1]) else {
                    throw LayoutError(
                        "MARQUEE_WORKERS: '\(pair)' is not stage=host:port (stages: \(Self.stageNames.joined(separator: ", ")))"
                    )
                }
                workers[parts[0], default: []].append(parts[1])
            }
        } else {
            for (stage, port) in Self.defaultPorts { workers[stage] = ["127.0.0.1:\(port)"] }
        }
        let prefix = self.prefix
        self.stages = Self.stageNames.map { name in
            Stage(
                topics: StageTopics(stage: name, prefix: prefix, tiers: tiers),
                group: settings["MARQUEE_GROUP_\(name.uppercased())"] ?? "marquee-\(name)",
                workers: workers[name] ?? []
            )
        }
    }

    /// The layout from a settings file (if any) overridden by the environment.
    ///
    /// - Parameters:
    ///   - file: A file of `NAME=value` lines (`#` comments, blank lines, optional `export ` and quotes, as a
    ///     shell or compose `.env` file has them); `nil`: `MARQUEE_CONFIG` from the environment, if set.
    /// - Throws: ``LayoutError`` for an unreadable file, a malformed line (with its number) or a bad value.
    public static func load(file: String?, environment: [String: String]) throws(LayoutError) -> PipelineLayout {
        var settings: [String: String] = [:]
        if let path = file ?? environment["MARQUEE_CONFIG"] {
            settings = try Self.readSettings(path)
        }
        settings.merge(environment.filter { $0.key.hasPrefix("MARQUEE_") }) { _, environment in environment }
        return try PipelineLayout(settings: settings)
    }

    /// The `NAME=value` lines of a settings file.
    static func readSettings(_ path: String) throws(LayoutError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw LayoutError("cannot read the settings file \(path)") }
        var settings: [String: String] = [:]
        for (index, rawLine) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine.trimmingWhitespace())
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count) }
            guard let equals = line.firstIndex(of: "="), line[..<equals].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                equals > line.startIndex
            else {
                throw LayoutError("\(path):\(index + 1): expected NAME=value")
            }
            var value = Substring(line[line.index(after: equals)...].trimmingWhitespace())
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            settings[String(line[..<equals])] = String(value)
        }
        return settings
    }

    private static func positive(_ settings: [String: String], _ name: String, default value: Int) throws(LayoutError) -> Int {
        guard let text = settings[name] else { return value }
        guard let number = Int(text), number > 0 else { throw LayoutError("\(name): '\(text)' is not a positive whole number") }
        return number
    }

    private static func isTopicCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "." || character == "_" || character == "-")
    }

    private static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex, let port = Int(text[text.index(after: colon)...]) else {
            return false
        }
        return (1...65535).contains(port)
    }
}

/// A setting of the pipeline layout that cannot be used, in words for the operator.
public struct LayoutError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
