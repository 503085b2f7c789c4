import MarqueeJSON

/// Consumer lag read from librdkafka's statistics JSON.
public enum ConsumerLag {
    /// The lag per topic: the sum of `consumer_lag` over the topic's partitions this member consumes (those
    /// without a known lag, and the internal partition -1, count as 0), for every topic the statistics name.
    public static func perTopic(statistics: String) -> [String: Int64] {
        guard let document = JSONDocument(Array(statistics.utf8)),
            let topics = document.root[member: "topics"]?.members
        else { return [:] }
        var lags: [String: Int64] = [:]
        for (topic, value) in topics {
            guard let partitions = value[member: "partitions"]?.members else { continue }
            var sum: Int64 = 0
            for (partition, fields) in partitions where partition != "-1" {
                if case .integer(let lag)? = fields[member: "consumer_lag"]?.scalar, lag > 0 { sum += lag }
            }
            lags[topic] = sum
        }
        return lags
    }
}
