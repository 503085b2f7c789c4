internal import Crdkafka
import Logging
import Synchronization

import struct Foundation.Data

/// State the C callbacks of one librdkafka handle reach through its `opaque` pointer.
///
/// Sendable by construction: immutable references plus `Mutex`-guarded values. It is created before the handle
/// and released after `rd_kafka_destroy` returned, so every callback finds it alive.
final class RDKafkaClientContext: Sendable {
    let logger: Logger
    /// The last error librdkafka reported through `error_cb` (broker down, resolve failure…), for error texts.
    let lastError = Mutex<(code: RDKafkaCode, text: String)?>(nil)
    /// The latest statistics JSON (`stats_cb`).
    let statistics = Mutex<String?>(nil)
    /// Every statistics JSON as it arrives; the newest one waits when nobody reads.
    let statisticsUpdates: AsyncStream<String>
    private let statisticsContinuation: AsyncStream<String>.Continuation
    /// Called on the consumer's poll thread for assign/revoke events; `nil` for producers.
    let rebalance:
        (@Sendable (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void)?

    init(
        logger: Logger,
        rebalance: (
            @Sendable (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) ->
                Void
        )? = nil
    ) {
        self.logger = logger
        self.rebalance = rebalance
        (self.statisticsUpdates, self.statisticsContinuation) = AsyncStream.makeStream(
            bufferingPolicy: .bufferingNewest(1)
        )
    }

    deinit {
        self.statisticsContinuation.finish()
    }

    func publishStatistics(_ json: String) {
        self.statistics.withLock { $0 = json }
        self.statisticsContinuation.yield(json)
    }

    /// The last broker error in words, for appending to timeouts (`"; last broker error: …"`), or an empty string.
    var lastErrorSuffix: String {
        guard let last = self.lastError.withLock({ $0 }) else { return "" }
        return "; last broker error: \(last.text)"
    }

    static func from(_ handle: OpaquePointer?) -> RDKafkaClientContext? {
        guard let handle, let opaque = rd_kafka_opaque(handle) else { return nil }
        return Unmanaged<RDKafkaClientContext>.fromOpaque(opaque).takeUnretainedValue()
    }
}

/// Owns one `rd_kafka_t` handle.
///
/// `@unchecked Sendable`: librdkafka's handle is thread-safe for every call this layer makes on it; the pointer
/// itself never changes, and `rd_kafka_destroy` runs only in `deinit`, when no other reference exists.
final class RDKafkaClient: @unchecked Sendable {
    enum Kind {
        case producer
        case consumer
    }

    /// The `rd_kafka_t *`.
    let handle: OpaquePointer
    let context: RDKafkaClientContext

    /// The lowest librdkafka that talks to the test broker (2.0.2's ApiVersions parsing fails against it).
    static let minimumVersion: Int32 = 0x0201_00ff

    /// Creates a handle with the given properties and Marquee's log, error and statistics callbacks.
    ///
    /// - Parameters:
    ///   - configure: Extra set-up of the `rd_kafka_conf_t *` before the handle takes it (delivery or rebalance
    ///     callbacks).
    /// - Throws: A ``KafkaError`` naming the rejected property (never its value: it may be a secret).
    init(
        kind: Kind,
        properties: [String: String],
        context: RDKafkaClientContext,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws(KafkaError) {
        guard rd_kafka_version() >= Self.minimumVersion else {
            throw KafkaError(
                code: .unsupportedLibraryVersion,
                reason: "librdkafka \(String(cString: rd_kafka_version_str())) is linked; Marquee needs 2.1 or newer"
            )
        }
        guard let conf = rd_kafka_conf_new() else { fatalError("rd_kafka_conf_new returned NULL (out of memory)") }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw .configuration("librdkafka rejected property '\(key)': \(Self.string(errorText))")
            }
        }
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_log_cb(conf) { handle, level, facility, message in
            guard let context = RDKafkaClientContext.from(handle) else { return }
            let text = message.map { String(cString: $0) } ?? ""
            let facility = facility.map { String(cString: $0) } ?? ""
            // Connection failures are logged here straight from librdkafka's broker threads; error_cb would
            // need a poll to be served, which an idle admin client or a starting consumer does not do.
            if facility == "FAIL" {
                // "[thrd:host:port/bootstrap]: host:port/bootstrap: Connect to … failed: …": keep what follows
                // the thread tag.
                let reason =
                    text.hasPrefix("[thrd:")
                    ? text.split(separator: "]: ", maxSplits: 1).last.map(String.init) ?? text : text
                context.lastError.withLock { $0 = (.transport, reason) }
            }
            context.logger.log(
                level: Logger.Level(syslog: level),
                "\(text)",
                metadata: [MarqueeKafkaLoggingKeys.facility: "\(facility)"],
                source: "librdkafka"
            )
        }
        rd_kafka_conf_set_error_cb(conf) { handle, code, reason, _ in
            guard let context = RDKafkaClientContext.from(handle) else { return }
            let text = reason.map { String(cString: $0) } ?? RDKafkaCode(rawValue: code).message
            let rdCode = RDKafkaCode(rawValue: code)
            context.lastError.withLock { $0 = (rdCode, text) }
            // librdkafka has already logged connection failures through log_cb; only a fatal error is news.
            context.logger.log(
                level: rdCode == .fatal ? .critical : .debug,
                "kafka client error: \(text)",
                metadata: [MarqueeKafkaLoggingKeys.error: "\(rdCode.name)"]
            )
        }
        rd_kafka_conf_set_stats_cb(conf) { handle, json, length, _ in
            guard let context = RDKafkaClientContext.from(handle), let json else { return 0 }
            let text = json.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
            context.publishStatistics(text)
            return 0  // librdkafka frees the JSON
        }
        configure(conf)

        // rd_kafka_new takes ownership of conf on success only.
        guard
            let handle = rd_kafka_new(
                kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER,
                conf,
                &errorText,
                errorText.count
            )
        else {
            rd_kafka_conf_destroy(conf)
            throw .configuration("could not create the Kafka client: \(Self.string(errorText))")
        }
        self.handle = handle
        self.context = context
    }

    deinit {
        // Blocks until librdkafka's threads have stopped; by now the owner has flushed, or closed the consumer
        // (so destroy must not try to close it again, which could wait on an unreachable group coordinator).
        rd_kafka_destroy_flags(self.handle, Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE))
    }

    static func string(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { pointer in
            let bytes = UnsafeRawBufferPointer(pointer)
            let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }

    /// Fetches cluster metadata; blocks up to `timeout`, so call it off the cooperative pool.
    ///
    /// Never names a topic in the request: some brokers (the test broker among them) create a topic a metadata
    /// request names.
    ///
    /// - Parameter localOnly: Ask only for the topics this client already knows (the cheapest request that
    ///   proves a broker answers) instead of all topics.
    func metadata(localOnly: Bool = false, timeout: Duration) throws(KafkaError) -> [KafkaTopicMetadata] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let code = RDKafkaCode(
            rd_kafka_metadata(self.handle, localOnly ? 0 : 1, nil, &metadata, Int32(timeout.milliseconds))
        )
        guard code == .noError, let metadata else {
            if code.meansNoBrokerAnswered { throw .unanswered(within: timeout, self.context, code: code) }
            throw .rdKafka(.admin, code, context: "metadata request failed")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var topics: [KafkaTopicMetadata] = []
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let entry = metadata.pointee.topics[index]
            let name = String(cString: entry.topic)
            topics.append(
                KafkaTopicMetadata(
                    name: name,
                    partitions: (0..<Int(entry.partition_cnt)).map { Int32(entry.partitions[$0].id) }.sorted(),
                    error: entry.err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : RDKafkaCode(entry.err)
                )
            )
        }
        return topics.sorted { $0.name < $1.name }
    }
}

extension Logger.Level {
    /// Maps a syslog level (librdkafka's log levels) to swift-log.
    init(syslog: Int32) {
        switch syslog {
        case ...2: self = .critical
        case 3: self = .error
        case 4: self = .warning
        case 5: self = .notice
        case 6: self = .info
        default: self = .debug
        }
    }
}
