/// One partition of one topic.
public struct KafkaTopicPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }

    public var description: String { "\(self.topic)[\(self.partition)]" }
}

/// A topic as the cluster's metadata describes it.
public struct KafkaTopicMetadata: Hashable, Sendable {
    public var name: String
    /// Partition ids, ascending.
    public var partitions: [Int32]
    /// Set when the broker reported an error for this topic (for example, unknown topic).
    public var error: RDKafkaCode?
}

/// A message header. Kafka headers may repeat and may have no value.
///
/// A value given as text is kept as that `String` and handed to librdkafka from its UTF-8 bytes, so a producer's
/// headers cost no byte array each (the stages send about nine messages a job, each with five or six headers).
/// Equality and hashing are by bytes: a value given as text equals the same value given as its UTF-8 bytes.
public struct KafkaHeader: Hashable, Sendable {
    public var key: String
    private var storage: Storage

    private enum Storage: Sendable {
        case absent
        case bytes([UInt8])
        case text(String)
    }

    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.storage = value.map { .bytes($0) } ?? .absent
    }

    public init(key: String, value: String) {
        self.key = key
        self.storage = .text(value)
    }

    /// The value's bytes, or `nil` when the header has no value.
    public var value: [UInt8]? {
        get {
            switch self.storage {
            case .absent: nil
            case .bytes(let bytes): bytes
            case .text(let text): Array(text.utf8)
            }
        }
        set { self.storage = newValue.map { .bytes($0) } ?? .absent }
    }

    /// How many bytes the value takes (0 when it has none), without copying it.
    public var valueByteCount: Int {
        switch self.storage {
        case .absent: 0
        case .bytes(let bytes): bytes.count
        case .text(let text): text.utf8.count
        }
    }

    /// The value as UTF-8 text, if it has one.
    public var stringValue: String? {
        switch self.storage {
        case .absent: nil
        case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
        case .text(let text): text
        }
    }

    /// Calls `body` with the value's bytes (`nil`: no value), without copying them.
    func withValueBytes<Result>(_ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
        switch self.storage {
        case .absent:
            return body(nil)
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { body($0) }
        case .text(let text):
            // A native string lends its bytes in place; only another kind is copied first.
            if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
                return result
            }
            var text = text
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Calls `body` with the key's and the value's bytes (`nil`: no value), without copying either.
    func withKeyAndValueBytes<Result>(_ body: (UnsafeBufferPointer<CChar>, UnsafeRawBufferPointer?) -> Result) -> Result
    {
        self.withValueBytes { value in
            if let result = self.key.utf8.withContiguousStorageIfAvailable({ key in
                key.withMemoryRebound(to: CChar.self) { body($0, value) }
            }) {
                return result
            }
            var key = self.key
            return key.withUTF8 { key in key.withMemoryRebound(to: CChar.self) { body($0, value) } }
        }
    }

    public static func == (lhs: KafkaHeader, rhs: KafkaHeader) -> Bool {
        guard lhs.key == rhs.key else { return false }
        return lhs.withValueBytes { left in
            rhs.withValueBytes { right in
                switch (left, right) {
                case (nil, nil): true
                case (let left?, let right?): left.elementsEqual(right)
                default: false
                }
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.key)
        self.withValueBytes { bytes in
            hasher.combine(bytes != nil)
            if let bytes { hasher.combine(bytes: bytes) }
        }
    }
}

extension Array where Element == KafkaHeader {
    /// The value of the last header with this key, as text.
    public func string(_ key: String) -> String? {
        self.last { $0.key == key }?.stringValue
    }
}
