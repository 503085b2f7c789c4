import ArgumentParser
import MarqueeKafka
import MarqueeObservability
import MarqueePipeline
import MarqueeWorker
import Testing

@Suite struct WorkerOptionsTests {
    @Test func flagsBecomeTheStageConfiguration() throws {
        let options = try WorkerOptions.parse([
            "--brokers", "k1:9092,k2:9092", "--topic-prefix", "test.", "--group", "g1", "--concurrency", "7",
            "--retry-delays", "500ms, 2s,1m", "--shutdown-timeout", "5s", "-X", "security.protocol=SASL_SSL",
        ])
        let configuration = try options.stageConfiguration(stage: "fetch", defaultConcurrency: 64)
        #expect(configuration.topics.main == "test.fetch")
        #expect(configuration.topics.tiers == 3)
        #expect(configuration.retry.delays == [.milliseconds(500), .seconds(2), .seconds(60)])
        #expect(configuration.groupID == "g1")
        #expect(configuration.concurrency == 7)
        #expect(configuration.shutdownTimeout == .seconds(5))
        #expect(configuration.kafka.bootstrapServers == ["k1:9092", "k2:9092"])
        #expect(configuration.kafka.additionalProperties == ["security.protocol": "SASL_SSL"])
    }

    @Test func defaultsComeFromTheWorker() throws {
        let options = try WorkerOptions.parse(["--group", "", "--concurrency", "0", "--metrics-address", ""])
        let configuration = try options.stageConfiguration(stage: "images", defaultConcurrency: 8)
        #expect(configuration.groupID == "marquee-images")
        #expect(configuration.concurrency == 8)
        #expect(try options.parsedMetricsAddress(defaultPort: 9102) == MetricsAddress(host: "127.0.0.1", port: 9102))
    }

    @Test func metricsAddresses() throws {
        #expect(
            try WorkerOptions.parse(["--metrics-address", "0.0.0.0:9200"]).parsedMetricsAddress(defaultPort: 1)
                == MetricsAddress(host: "0.0.0.0", port: 9200)
        )
        #expect(
            try WorkerOptions.parse(["--metrics-address", "[::1]:0"]).parsedMetricsAddress(defaultPort: 1)
                == MetricsAddress(host: "::1", port: 0)
        )
    }

    @Test func metricsAllowedHostsAddToTheObservabilityDefault() throws {
        let options = try WorkerOptions.parse([
            "--metrics-allowed-host", "marquee-fetch.marquee.svc", "--metrics-allowed-host", ".metrics.example",
        ])
        let allowed = try options.parsedMetricsAddress(defaultPort: 9101).allowedHosts
        #expect(allowed == (try HostAllowList.observability.adding(["marquee-fetch.marquee.svc", ".metrics.example"])))
        #expect(allowed.allows(host: "marquee-fetch.marquee.svc:9101"))
        #expect(allowed.allows(host: "a.metrics.example"))
        #expect(allowed.allows(host: "10.1.2.3:9101"), "pod IPs, as Kubernetes probes and Prometheus ask")
        #expect(allowed.allows(host: "marquee-fetch:9101"), "a service name without a dot")
        #expect(!allowed.allows(host: "evil.example:9101"))
    }

    @Test(arguments: [
        (["--retry-delays", "10s,soon"], "'soon' is not a duration"),
        (["--retry-delays", ""], "is not a duration"),
        (["--shutdown-timeout=-3s"], "not a duration"),
        (["--metrics-address", "localhost"], "is not host:port"),
        (["--metrics-address", "127.0.0.1:70000"], "is not host:port"),
        (["--metrics-allowed-host", "metrics.example:9101"], "--metrics-allowed-host (MARQUEE_METRICS_ALLOWED_HOSTS): 'metrics.example:9101' has a port"),
        (["-X", "novalue"], "is not key=value"),
        (["--log-level", "loud"], "--log-level must be one of"),
        (["--session-timeout", "500ms"], "between 1s and 1h"),
        (["--concurrency=-1"], "cannot be negative"),
        (["--store-timeout", "0"], "--store-timeout: expected 1 to 3600 seconds, got 0"),
    ])
    func badOptionsSayWhatIsWrong(arguments: [String], message: String) {
        #expect {
            _ = try WorkerOptions.parse(arguments)
        } throws: { error in
            WorkerOptions.message(for: error).contains(message)
        }
    }

    @Test func theStoreDeadlineIsEveryWorkers() throws {
        #expect(try WorkerOptions.parse([]).storeDeadline == .seconds(30))
        #expect(try WorkerOptions.parse(["--store-timeout", "5"]).storeDeadline == .seconds(5))
    }

    @Test func durationText() {
        #expect(DurationText.parse("250ms") == .milliseconds(250))
        #expect(DurationText.parse("1.5s") == .milliseconds(1500))
        #expect(DurationText.parse("2m") == .seconds(120))
        #expect(DurationText.parse("1h") == .seconds(3600))
        #expect(DurationText.parse("30") == .seconds(30))
        #expect(DurationText.parse("-1s") == nil)
        #expect(DurationText.parse("1e99s") == nil)
        #expect(DurationText.parse("ms") == nil)
    }
}
