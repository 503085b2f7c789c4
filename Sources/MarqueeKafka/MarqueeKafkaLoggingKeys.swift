/// Log metadata keys of the Kafka layer (dotted names, one place).
public enum MarqueeKafkaLoggingKeys {
    public static let topic = "marquee.topic"
    public static let partition = "marquee.partition"
    public static let offset = "marquee.offset"
    public static let group = "marquee.group"
    public static let error = "marquee.error"
    public static let facility = "marquee.kafka.facility"
}
