public import MarqueeCore

/// The stage routes a Kafka failure of a job by ``KafkaError/isRetriable``, like every module's error.
extension KafkaError: RetriableError {}
