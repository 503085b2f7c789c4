import struct Foundation.Data
import class Foundation.JSONSerialization
import class Foundation.NSNumber

/// Consumer lag read from librdkafka's statistics JSON.
public enum ConsumerLag {
    /// The lag per topic: the sum of `consumer_lag` over the topic's partitions this member consumes (those
    /// without a known lag, and the internal partition -1, count as 0), for every topic the statistics name.
    public static func perTopic(statistics: String) -> [String: Int64] {
        guard
            let root = try? JSONSerialization.jsonObject(with: Data(statistics.utf8)) as? [String: Any],
            let topics = root["topics"] as? [String: Any]
        else { return [:] }
        var lags: [String: Int64] = [:]
        for (topic, value) in topics {
            guard let partitions = (value as? [String: Any])?["partitions"] as? [String: Any] else { continue }
            var sum: Int64 = 0
            for (partition, fields) in partitions where partition != "-1" {
                if let lag = ((fields as? [String: Any])?["consumer_lag"] as? NSNumber)?.int64Value, lag > 0 {
                    sum += lag
                }
            }
            lags[topic] = sum
        }
        return lags
    }
}
