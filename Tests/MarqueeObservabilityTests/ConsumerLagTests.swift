import MarqueeObservability
import Testing

@Suite struct ConsumerLagTests {
    /// The shape of librdkafka's statistics (STATISTICS.md), trimmed to what the lag reads: two topics, the
    /// internal partition -1, a partition without a known lag (-1).
    static let statistics = #"""
        {"name":"rdkafka#consumer-1","type":"consumer","ts":1,"brokers":{},
         "topics":{
          "marquee.fetch":{"topic":"marquee.fetch","partitions":{
            "0":{"partition":0,"fetch_state":"active","consumer_lag":120,"consumer_lag_stored":100},
            "1":{"partition":1,"fetch_state":"active","consumer_lag":5},
            "2":{"partition":2,"fetch_state":"none","consumer_lag":-1},
            "-1":{"partition":-1,"consumer_lag":-1}}},
          "marquee.fetch.retry.1":{"topic":"marquee.fetch.retry.1","partitions":{
            "0":{"partition":0,"fetch_state":"active","consumer_lag":0}}}},
         "cgrp":{"state":"up"}}
        """#

    @Test func sumsTheKnownLagOfEachTopicsPartitions() {
        #expect(
            ConsumerLag.perTopic(statistics: Self.statistics) == ["marquee.fetch": 125, "marquee.fetch.retry.1": 0]
        )
    }

    @Test func unreadableStatisticsGiveNothing() {
        #expect(ConsumerLag.perTopic(statistics: "not json").isEmpty)
        #expect(ConsumerLag.perTopic(statistics: #"{"topics":[]}"#).isEmpty)
    }
}
