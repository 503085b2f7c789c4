import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import Testing

@Suite struct EnvelopeKafkaHeadersTests {
    @Test func kafkaHeadersAreTheEnvelopesHeadersAsUTF8Bytes() {
        // Every header there is, and text beyond ASCII.
        let root = JobID.make()
        let envelope = Envelope(
            id: .make(),
            root: root,
            parent: root,
            attempt: 4,
            notBefore: 1_700_000_000_000,
            origin: "marquee.fetch/2/41",
            error: "HTTP 503 from api.themoviedb.org — «busy»",
            errorKind: .transient,
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        )
        let expected = envelope.headers.map { KafkaHeader(key: $0.0, value: Array($0.1.utf8)) }
        #expect(envelope.kafkaHeaders == expected)
        #expect(envelope.kafkaHeaders.map(\.value) == expected.map(\.value))
        #expect(envelope.headerCount == 9)
        #expect(Envelope.root().headerCount == 3)
    }
}
