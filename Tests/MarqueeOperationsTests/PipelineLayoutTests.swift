import Foundation
import MarqueeOperations
import MarqueePipeline
import Testing

@Suite struct PipelineLayoutTests {
    @Test func defaultsNameEveryStageWithItsGroupTopicsAndWorker() throws {
        let layout = try PipelineLayout(settings: [:])
        #expect(layout.stages.map(\.name) == ["fetch", "images", "records"])
        let fetch = try #require(layout.stage("fetch"))
        #expect(fetch.group == "marquee.fetch", "named after the topic prefix")
        #expect(
            fetch.topics.all == [
                "marquee.fetch", "marquee.fetch.retry.1", "marquee.fetch.retry.2", "marquee.fetch.retry.3",
                "marquee.fetch.dlq",
            ]
        )
        #expect(fetch.workers == ["127.0.0.1:9101"])
        #expect(layout.stage("records")?.workers == ["127.0.0.1:9103"])
        #expect(layout.partitions == 8)
        #expect(layout.stage(ofTopic: "marquee.images.retry.2")?.name == "images")
        #expect(layout.stage(ofTopic: "other") == nil)
    }

    @Test func settingsChangePrefixTiersGroupsPartitionsAndWorkers() throws {
        let layout = try PipelineLayout(settings: [
            "MARQUEE_TOPIC_PREFIX": "test.",
            "MARQUEE_RETRY_DELAYS": "1s,5s",
            "MARQUEE_TOPIC_PARTITIONS": "3",
            "MARQUEE_GROUP_IMAGES": "posters",
            "MARQUEE_WORKERS": "fetch=10.0.0.1:9101, fetch=10.0.0.2:9101,records=idx:9",
        ])
        #expect(layout.stage("fetch")?.topics.consumed == ["test.fetch", "test.fetch.retry.1", "test.fetch.retry.2"])
        #expect(layout.stage("images")?.group == "posters")
        #expect(
            layout.stage("fetch")?.group == "test.fetch",
            "two pipelines with different prefixes never share a group"
        )
        #expect(layout.stage("fetch")?.workers == ["10.0.0.1:9101", "10.0.0.2:9101"])
        #expect(layout.stage("images")?.workers == [])
        #expect(layout.stage("records")?.workers == ["idx:9"])
        #expect(layout.partitions == 3)
    }

    @Test(arguments: [
        (
            "MARQUEE_TOPIC_PARTITIONS", "0",
            "MARQUEE_TOPIC_PARTITIONS '0' from the environment: expected a whole number from 1 to 10000"
        ),
        ("MARQUEE_WORKERS", "fetch:9101", "MARQUEE_WORKERS: 'fetch:9101' from the environment is not stage=host:port"),
        ("MARQUEE_WORKERS", "index=h:1", "MARQUEE_WORKERS: 'index=h:1' from the environment is not stage=host:port"),
        (
            "MARQUEE_TOPIC_PREFIX", "a b",
            "MARQUEE_TOPIC_PREFIX (--topic-prefix) 'a b' from the environment: expected letters, digits"
        ),
        (
            "MARQUEE_RETRY_DELAYS", "soon",
            "MARQUEE_RETRY_DELAYS (--retry-delays) 'soon' from the environment: expected 1 to 10 durations"
        ),
    ])
    func badSettingsAreNamed(name: String, value: String, message: String) {
        #expect {
            _ = try PipelineLayout(settings: [name: value])
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func aSettingsFileIsReadAndTheEnvironmentOverridesIt() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString).env").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        # the pipeline
        export MARQUEE_TOPIC_PREFIX="file."
        MARQUEE_TOPIC_PARTITIONS=2

        MARQUEE_WORKERS='fetch=a:1'
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let layout = try PipelineLayout.load(
            file: path,
            environment: ["MARQUEE_TOPIC_PARTITIONS": "5", "HOME": "/root"]
        )
        #expect(layout.prefix == "file.")
        #expect(layout.partitions == 5)
        #expect(layout.stage("fetch")?.workers == ["a:1"])

        try "MARQUEE_TOPIC_PREFIX=x.\nnot a setting\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try PipelineLayout.load(file: path, environment: [:])
        } throws: { error in
            "\(error)" == "\(path):2: expected NAME=value"
        }
        #expect {
            _ = try PipelineLayout.load(file: nil, environment: ["MARQUEE_CONFIG": path + ".missing"])
        } throws: { error in
            "\(error)" == "cannot read the settings file \(path).missing"
        }
    }
}
