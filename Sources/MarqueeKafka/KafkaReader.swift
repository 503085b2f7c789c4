internal import Crdkafka
public import Logging

import class Foundation.ProcessInfo

/// A record read by offset with a ``KafkaReader``: what the broker holds, untouched.
public struct KafkaRecord: Sendable, Hashable {
    public var partition: KafkaTopicPartition
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// Milliseconds since the epoch (create or log-append time), if the record has one.
    public var timestamp: Int64?

    public init(
        partition: KafkaTopicPartition,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader],
        timestamp: Int64?
    ) {
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    public var topic: String { self.partition.topic }
    /// The value as UTF-8 text.
    public var valueString: String { String(decoding: self.value, as: UTF8.self) }
    /// The key as UTF-8 text, if there is one.
    public var keyString: String? { self.key.map { String(decoding: $0, as: UTF8.self) } }
}

/// Reads ranges of offsets from partitions without joining a consumer group: what operator tools need to look
/// at a topic (dead letters, the oldest unconsumed message) without moving anyone's committed offsets.
///
/// Each ``read(_:limit:timeout:)`` assigns the partitions itself and commits nothing. Calls block a thread of
/// the shared blocking pool (``BlockingExecutor``), never the cooperative pool.
public final class KafkaReader: Sendable {
    private let properties: [String: String]
    private let logger: Logger

    /// - Throws: A ``KafkaError`` when the configuration is invalid.
    public init(configuration: KafkaConfiguration, logger: Logger) throws(KafkaError) {
        try configuration.validate()
        var properties = configuration.properties
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        properties["enable.partition.eof"] = "true"
        properties["auto.offset.reset"] = "earliest"
        properties.merge(configuration.additionalProperties) { _, raw in raw }
        // librdkafka's assign needs a group id; the reader never joins the group nor commits for it.
        properties["group.id"] = "marquee-reader"
        self.properties = properties
        self.logger = logger
    }

    /// The records at offsets `range` of each partition, in partition then offset order.
    ///
    /// Offsets the broker no longer holds (deleted by retention, or compacted away) are skipped; reading stops
    /// at each range's end, at the partition's end, or after `limit` records in all.
    ///
    /// - Parameters:
    ///   - ranges: Offsets to read per partition; an empty range reads nothing.
    ///   - limit: The most records to return in all (`nil`: every record of the ranges).
    ///   - timeout: How long to wait for the broker before giving up.
    /// - Throws: A ``KafkaError`` when the broker does not answer within `timeout`, or refuses a partition.
    public func read(
        _ ranges: [KafkaTopicPartition: Range<Int64>],
        limit: Int? = nil,
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> [KafkaRecord] {
        let wanted = ranges.filter { !$0.value.isEmpty }
        guard !wanted.isEmpty, limit.map({ $0 > 0 }) ?? true else { return [] }
        let properties = self.properties
        let logger = self.logger
        return try await BlockingExecutor.run { () throws(KafkaError) -> [KafkaRecord] in
            let client = try RDKafkaClient(
                kind: .consumer,
                properties: properties,
                context: RDKafkaClientContext(logger: logger)
            )
            return try Self.read(wanted, limit: limit, timeout: timeout, client: client)
        }
    }

    private static func read(
        _ ranges: [KafkaTopicPartition: Range<Int64>],
        limit: Int?,
        timeout: Duration,
        client: RDKafkaClient
    ) throws(KafkaError) -> [KafkaRecord] {
        rd_kafka_poll_set_consumer(client.handle)
        let list = RDKafkaTopicPartitionList(ranges.map { ($0.key, $0.value.lowerBound) })
        let code = RDKafkaCode(rd_kafka_assign(client.handle, list.pointer))
        guard code == .noError else { throw .rdKafka(.admin, code, context: "could not assign the partitions to read") }
        defer { _ = rd_kafka_assign(client.handle, nil) }

        var pending = ranges
        var records: [KafkaRecord] = []
        let deadline = ContinuousClock.now + timeout
        while !pending.isEmpty, records.count < limit ?? .max {
            guard ContinuousClock.now < deadline else {
                let left = pending.keys.sorted().map(\.description).joined(separator: ", ")
                throw KafkaError(
                    code: .brokerUnreachable,
                    reason: "reading \(left) did not finish within \(timeout)\(client.context.lastErrorSuffix)"
                )
            }
            guard let raw = rd_kafka_consumer_poll(client.handle, 100) else { continue }
            defer { rd_kafka_message_destroy(raw) }
            let message = raw.pointee
            let partition = KafkaTopicPartition(
                topic: message.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? "",
                partition: message.partition
            )
            let error = RDKafkaCode(message.err)
            if error == .partitionEOF {
                // `offset` is the partition's end: nothing more to read there.
                pending[partition] = nil
                continue
            }
            guard error == .noError else {
                if error == .transport || error == .allBrokersDown || error == .timedOut { continue }
                throw .rdKafka(.admin, error, context: "reading \(partition)")
            }
            guard let range = pending[partition] else { continue }
            if message.offset >= range.upperBound {
                pending[partition] = nil
                continue
            }
            if message.offset >= range.lowerBound { records.append(Self.record(raw, partition: partition)) }
            if message.offset + 1 >= range.upperBound { pending[partition] = nil }
        }
        if let limit, records.count > limit { records.removeLast(records.count - limit) }
        return records.sorted { ($0.partition, $0.offset) < ($1.partition, $1.offset) }
    }

    private static func record(
        _ raw: UnsafeMutablePointer<rd_kafka_message_t>,
        partition: KafkaTopicPartition
    ) -> KafkaRecord {
        let message = raw.pointee
        func bytes(_ pointer: UnsafeRawPointer?, _ count: Int) -> [UInt8]? {
            pointer.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) }
        }
        var headers: [KafkaHeader] = []
        var list: OpaquePointer?
        if rd_kafka_message_headers(raw, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            var index = 0
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(KafkaHeader(key: name.map { String(cString: $0) } ?? "", value: bytes(value, size)))
                index += 1
            }
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(raw, &timestampType)
        return KafkaRecord(
            partition: partition,
            offset: message.offset,
            key: bytes(message.key, message.key_len),
            value: bytes(message.payload, message.len) ?? [],
            headers: headers,
            timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
        )
    }
}
