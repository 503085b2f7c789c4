public import MarqueePipeline
public import MarqueeSettings

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
        /// The workers' consumer group (`MARQUEE_GROUP_<STAGE>`, else `<prefix><stage>`, as the workers default).
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

    /// A layout from `MARQUEE_*` settings, read as the workers read theirs (``Catalogue``).
    ///
    /// - `MARQUEE_TOPIC_PREFIX` (default `marquee.`)
    /// - `MARQUEE_RETRY_DELAYS` (its number of delays is the number of retry tiers; default 3 tiers)
    /// - `MARQUEE_TOPIC_PARTITIONS` (default 8), `MARQUEE_REPLICATION_FACTOR` (default 1)
    /// - `MARQUEE_GROUP_FETCH`, `MARQUEE_GROUP_IMAGES`, `MARQUEE_GROUP_RECORDS` (default `<prefix><stage>`)
    /// - `MARQUEE_WORKERS`: `stage=host:port` pairs, comma-separated, a stage named once per worker
    ///   (default `fetch=127.0.0.1:9101,images=127.0.0.1:9102,records=127.0.0.1:9103`)
    ///
    /// - Throws: ``OperationsError`` naming the setting and what is wrong with it.
    public init(settings: [String: String]) throws(OperationsError) {
        do {
            try self.init(source: try Settings(environment: settings.filter { $0.key != Settings.fileVariable }))
        } catch let error as OperationsError {
            throw error
        } catch {
            throw OperationsError(.layout, "\(error)")
        }
    }

    /// A layout from the settings' layers (``load(file:environment:)``).
    public init(source: Settings) throws(OperationsError) {
        let tiers: Int
        var workers: [String: [String]] = [:]
        var groups: [String: String] = [:]
        do {
            self.prefix = try source.value(Catalogue.topicPrefix)
            tiers = try source.value(Catalogue.retryDelays).count
            self.partitions = try source.value(Catalogue.topicPartitions)
            self.replicationFactor = try source.value(Catalogue.replicationFactor)
            for (name, setting) in Catalogue.stageGroups {
                let group = try source.value(setting)
                if !group.isEmpty { groups[name] = group }
            }
            if let (text, origin) = try source.text(of: Catalogue.workers) {
                for pair in text.split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0.filter { !$0.isWhitespace }) }
                    guard parts.count == 2, Self.stageNames.contains(parts[0]), Self.isAddress(parts[1]) else {
                        throw OperationsError(
                            .layout,
                            "MARQUEE_WORKERS: '\(pair)' from \(origin) is not stage=host:port (stages: \(Self.stageNames.joined(separator: ", ")))"
                        )
                    }
                    workers[parts[0], default: []].append(parts[1])
                }
            } else {
                for (stage, port) in Self.defaultPorts { workers[stage] = ["127.0.0.1:\(port)"] }
            }
        } catch let error as OperationsError {
            throw error
        } catch {
            throw OperationsError(.layout, "\(error)")
        }
        let prefix = self.prefix
        self.stages = Self.stageNames.map { name in
            Stage(
                topics: StageTopics(stage: name, prefix: prefix, tiers: tiers),
                group: groups[name] ?? "\(prefix)\(name)",
                workers: workers[name] ?? []
            )
        }
    }

    /// The layout from a settings file (if any) overridden by the environment.
    ///
    /// - Parameters:
    ///   - file: A settings file (``SettingsFile``: `NAME=value` lines as an `.env` file has them); `nil`:
    ///     `MARQUEE_CONFIG` from the environment, if set.
    /// - Throws: ``OperationsError`` for an unreadable file, a malformed line (with its number) or a bad value.
    public static func load(file: String?, environment: [String: String]) throws(OperationsError) -> PipelineLayout {
        let source: Settings
        do {
            source = try Settings(environment: environment, settingsFile: file)
        } catch {
            throw OperationsError(.layout, error.description)
        }
        return try PipelineLayout(source: source)
    }

    private static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex,
            let port = Int(text[text.index(after: colon)...])
        else {
            return false
        }
        return (1...65535).contains(port)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
