internal import Crdkafka

extension KafkaAdmin {
    /// The configs of each topic as the broker reports them (DescribeConfigs), by topic and config name. A topic
    /// the broker reports no configs for (it does not exist, or the broker keeps none) is missing.
    ///
    /// - Throws: A ``KafkaError`` when no broker answered, or the broker refused the request.
    public func topicConfigs(_ topics: [String]) async throws(KafkaError) -> [String: [String: String]] {
        guard !topics.isEmpty else { return [:] }
        let client = self.client
        let timeout = self.timeout
        return try await Self.blocking { () throws(KafkaError) -> [String: [String: String]] in
            var resources: [OpaquePointer?] = topics.map { rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, $0) }
            defer { for resource in resources { rd_kafka_ConfigResource_destroy(resource) } }
            let event = try client.adminRequest(timeout: timeout, expecting: RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT) {
                options,
                queue in
                resources.withUnsafeMutableBufferPointer {
                    rd_kafka_DescribeConfigs(client.handle, $0.baseAddress, $0.count, options, queue)
                }
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            guard
                let results = rd_kafka_DescribeConfigs_result_resources(
                    rd_kafka_event_DescribeConfigs_result(event),
                    &count
                )
            else {
                return [:]
            }
            var configs: [String: [String: String]] = [:]
            for index in 0..<count {
                let resource = results[index]
                guard RDKafkaCode(rd_kafka_ConfigResource_error(resource)) == .noError else { continue }
                let name = String(cString: rd_kafka_ConfigResource_name(resource))
                var entryCount = 0
                guard let entries = rd_kafka_ConfigResource_configs(resource, &entryCount) else { continue }
                var values: [String: String] = [:]
                for entryIndex in 0..<entryCount {
                    let entry = entries[entryIndex]
                    guard let value = rd_kafka_ConfigEntry_value(entry) else { continue }
                    values[String(cString: rd_kafka_ConfigEntry_name(entry))] = String(cString: value)
                }
                if !values.isEmpty { configs[name] = values }
            }
            return configs
        }
    }
}
