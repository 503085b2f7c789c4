import Crypto
import MarqueeCore
import MarqueeKafka

/// How large a produced message is against the producer's `message.max.bytes`, and what a dead letter keeps of
/// an original too large to be produced whole.
enum MessageSize {
    /// The size librdkafka checks against `message.max.bytes`: key, value, each header's name and value, and a
    /// record's fixed overhead (rounded up: a message this reckons as fitting is never refused for its size).
    static func of(_ message: KafkaProducerMessage) -> Int {
        var size = 64 + (message.key?.count ?? 0) + message.value.count
        for header in message.headers { size += 10 + header.key.utf8.count + header.valueByteCount }
        return size
    }

    /// The headers a shrunk letter keeps when the original's would not fit.
    static let envelopeHeaders: Set<String> = [
        Envelope.Header.id, Envelope.Header.root, Envelope.Header.parent, Envelope.Header.attempt,
        Envelope.Header.notBefore, Envelope.Header.origin, Envelope.Header.error, Envelope.Header.errorKind,
        Envelope.Header.traceparent, Envelope.Header.replayedFrom, Envelope.Header.originalSize,
        Envelope.Header.originalSHA256, Envelope.Header.originalLocation, Envelope.Header.refresh,
    ]

    /// The longest a kept header value or key may be in a shrunk letter.
    static let keptFieldLength = 1024

    /// `letter` made to fit `limit`: its value cut to what fits, each header value and the key cut to 1 KiB,
    /// headers other than the envelope's (``envelopeHeaders``) dropped when they would not fit, and the
    /// original value's size, SHA-256 and `location` (where the whole original was kept) added.
    static func shrink(_ letter: KafkaProducerMessage, limit: Int, location: String?) -> KafkaProducerMessage {
        let original = letter.value
        var shrunk = letter
        shrunk.key = letter.key.map { Array($0.prefix(Self.keptFieldLength)) }
        shrunk.headers = letter.headers.compactMap { header in
            guard let value = header.value, value.count > Self.keptFieldLength else { return header }
            return KafkaHeader(key: header.key, value: Array(value.prefix(Self.keptFieldLength)))
        }
        shrunk.headers.removeAll {
            [Envelope.Header.originalSize, Envelope.Header.originalSHA256, Envelope.Header.originalLocation].contains(
                $0.key
            )
        }
        shrunk.headers.append(KafkaHeader(key: Envelope.Header.originalSize, value: String(original.count)))
        shrunk.headers.append(KafkaHeader(key: Envelope.Header.originalSHA256, value: Self.sha256(original)))
        if let location { shrunk.headers.append(KafkaHeader(key: Envelope.Header.originalLocation, value: location)) }
        shrunk.value = []
        if Self.of(shrunk) > limit / 2 {
            // Only the envelope's own headers, the last of each name: at most a few KiB whatever the original held.
            var kept: [KafkaHeader] = []
            for header in shrunk.headers.reversed() where Self.envelopeHeaders.contains(header.key) {
                if !kept.contains(where: { $0.key == header.key }) { kept.append(header) }
            }
            shrunk.headers = kept.reversed()
        }
        let room = max(0, limit - Self.of(shrunk))
        shrunk.value = Array(original.prefix(room))
        return shrunk
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// "1.09 MB" style text of a byte count, for error reasons.
    static func text(_ bytes: Int) -> String {
        bytes >= 1_000_000 ? "\((Double(bytes) / 1_000_000 * 100).rounded() / 100) MB" : "\(bytes) bytes"
    }
}
