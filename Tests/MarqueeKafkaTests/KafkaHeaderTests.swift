import Testing

@testable import MarqueeKafka

@Suite struct KafkaHeaderTests {
    @Test func aValueGivenAsTextIsItsUTF8Bytes() {
        let text = KafkaHeader(key: "marquee-id", value: "01HF7YAT3V00000000000004HM é")
        let bytes = KafkaHeader(key: "marquee-id", value: Array("01HF7YAT3V00000000000004HM é".utf8))
        #expect(text == bytes)
        #expect(text.hashValue == bytes.hashValue)
        #expect(text.value == Array("01HF7YAT3V00000000000004HM é".utf8))
        #expect(text.stringValue == "01HF7YAT3V00000000000004HM é")
        #expect(bytes.stringValue == "01HF7YAT3V00000000000004HM é")
        text.withValueBytes { #expect($0.map(Array.init) == bytes.value) }
    }

    @Test func noValueAnEmptyValueAndOtherValuesDiffer() {
        let absent = KafkaHeader(key: "h", value: nil as [UInt8]?)
        let emptyText = KafkaHeader(key: "h", value: "")
        let emptyBytes = KafkaHeader(key: "h", value: [])
        #expect(absent.value == nil && absent.stringValue == nil)
        absent.withValueBytes { #expect($0 == nil) }
        #expect(emptyText == emptyBytes)
        #expect(emptyText.value == [])
        emptyText.withValueBytes { #expect($0?.count == 0) }
        #expect(absent != emptyText)
        #expect(absent.hashValue != emptyText.hashValue)
        #expect(KafkaHeader(key: "h", value: "a") != KafkaHeader(key: "h", value: "b"))
        #expect(KafkaHeader(key: "h", value: "a") != KafkaHeader(key: "g", value: "a"))
    }

    @Test func settingTheValueReplacesTheText() {
        var header = KafkaHeader(key: "h", value: "before")
        header.value = Array("after".utf8)
        #expect(header.stringValue == "after")
        header.value = nil
        #expect(header.value == nil)
        #expect(header == KafkaHeader(key: "h", value: nil as [UInt8]?))
    }
}
