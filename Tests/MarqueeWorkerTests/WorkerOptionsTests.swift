import ArgumentParser
import MarqueeKafka
import MarqueeObservability
import MarqueePipeline
import MarqueeSettings
import MarqueeWorker
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import struct Foundation.URL
import struct Foundation.UUID

extension WorkerOptions {
    /// The settings from these flags alone (no environment, no settings file).
    fileprivate var alone: WorkerSettings {
        get throws { try self.resolved(environment: [:]) }
    }
}

@Suite struct WorkerOptionsTests {
    @Test func flagsBecomeTheStageConfiguration() throws {
        let options = try WorkerOptions.parse([
            "--brokers", "k1:9092,k2:9092", "--topic-prefix", "test.", "--group", "g1", "--concurrency", "7",
            "--retry-delays", "500ms, 2s,1m", "--shutdown-timeout", "5s", "-X", "security.protocol=SASL_SSL",
        ])
        let configuration = try options.alone.stageConfiguration(stage: "fetch", defaultConcurrency: 64)
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
        let configuration = try options.alone.stageConfiguration(stage: "images", defaultConcurrency: 8)
        #expect(configuration.groupID == "marquee.images", "named after the topic prefix")
        #expect(configuration.concurrency == 8)
        #expect(try options.alone.metricsAddress(defaultPort: 9102) == MetricsAddress(host: "127.0.0.1", port: 9102))
    }

    @Test func metricsAddresses() throws {
        #expect(
            try WorkerOptions.parse(["--metrics-address", "0.0.0.0:9200"]).alone.metricsAddress(defaultPort: 1)
                == MetricsAddress(host: "0.0.0.0", port: 9200)
        )
        #expect(
            try WorkerOptions.parse(["--metrics-address", "[::1]:0"]).alone.metricsAddress(defaultPort: 1)
                == MetricsAddress(host: "::1", port: 0)
        )
    }

    @Test func theAnnouncedAddressIsTheAdvertisedOneElseTheBindAddress() throws {
        let advertised = try WorkerOptions.parse([
            "--metrics-address", "0.0.0.0:9101", "--metrics-advertised-address", "10.0.0.5:9101",
        ])
        #expect(try advertised.alone.metricsAddress(defaultPort: 1).announced?.description == "10.0.0.5:9101")
        let environment = try WorkerOptions.parse([]).resolved(environment: [
            "MARQUEE_METRICS_ADVERTISED_ADDRESS": "[fd00::5]:9101"
        ])
        #expect(environment.metricsAddress(defaultPort: 9101).announced?.description == "[fd00::5]:9101")
        #expect(
            try WorkerOptions.parse([]).alone.metricsAddress(defaultPort: 9102).announced?.description
                == "127.0.0.1:9102"
        )
        let freePort = try WorkerOptions.parse(["--metrics-address", "127.0.0.1:0"]).alone.metricsAddress(
            defaultPort: 1
        )
        #expect(freePort.announced == nil, "port 0 is chosen after the client id is set")
        let everywhere = try WorkerOptions.parse(["--metrics-address", "0.0.0.0:9101"]).alone.metricsAddress(
            defaultPort: 1
        )
        #expect(everywhere.announced?.host == AnnouncedAddress.hostName(), "bound to every interface: the host name")
    }

    @Test func anAdvertisedAddressAClientIDCannotCarryIsRefused() throws {
        let options = try WorkerOptions.parse(["--metrics-advertised-address", "fd00__1:9101"])
        let error = #expect(throws: SettingError.self) { try options.alone }
        #expect(
            error?.description
                == "MARQUEE_METRICS_ADVERTISED_ADDRESS (--metrics-advertised-address) 'fd00__1:9101' from the command line: expected \(Catalogue.metricsAdvertisedAddress.expected)"
        )
    }

    @Test func metricsAllowedHostsAddToTheObservabilityDefault() throws {
        let options = try WorkerOptions.parse([
            "--metrics-allowed-host", "marquee-fetch.marquee.svc", "--metrics-allowed-host", ".metrics.example",
        ])
        let allowed = try options.alone.metricsAddress(defaultPort: 9101).allowedHosts
        #expect(allowed == (try HostAllowList.observability.adding(["marquee-fetch.marquee.svc", ".metrics.example"])))
        #expect(allowed.allows(host: "marquee-fetch.marquee.svc:9101"))
        #expect(allowed.allows(host: "a.metrics.example"))
        #expect(allowed.allows(host: "10.1.2.3:9101"), "pod IPs, as Kubernetes probes and Prometheus ask")
        #expect(allowed.allows(host: "marquee-fetch:9101"), "a service name without a dot")
        #expect(!allowed.allows(host: "evil.example:9101"))
    }

    @Test(arguments: [
        (
            ["--retry-delays", "10s,soon"],
            "MARQUEE_RETRY_DELAYS (--retry-delays) '10s,soon' from the command line: expected 1 to 10 durations"
        ),
        (
            ["--shutdown-timeout=-3s"],
            "MARQUEE_SHUTDOWN_TIMEOUT (--shutdown-timeout) '-3s' from the command line: expected a duration"
        ),
        (
            ["--metrics-address", "localhost"],
            "MARQUEE_METRICS_ADDRESS (--metrics-address) 'localhost' from the command line: expected host:port"
        ),
        (["--metrics-address", "127.0.0.1:70000"], "expected host:port"),
        (
            ["--metrics-advertised-address", "10.0.0.5"],
            "MARQUEE_METRICS_ADVERTISED_ADDRESS (--metrics-advertised-address) '10.0.0.5' from the command line: expected host:port"
        ),
        (
            ["--metrics-advertised-address", "10.0.0.5:0"],
            "expected host:port or [host]:port (brackets needed for IPv6), port 1 to 65535"
        ),
        (["--metrics-advertised-address", "fd00::1:9101"], "expected host:port or [host]:port"),
        (["-X", "novalue"], "--kafka-property: 'novalue' is not key=value"),
        (
            ["--log-level", "loud"],
            "MARQUEE_LOG_LEVEL (--log-level) 'loud' from the command line: expected one of trace, debug"
        ),
        (["--session-timeout", "500ms"], "expected a duration from 1s to 1h"),
        (["--concurrency=-1"], "expected a whole number from 0 to 100000"),
        (
            ["--store-timeout", "0"],
            "MARQUEE_STORE_TIMEOUT (--store-timeout) '0' from the command line: expected a whole number of seconds from 1 to 3600"
        ),
    ])
    func badOptionsSayWhatIsWrong(arguments: [String], message: String) {
        #expect {
            _ = try WorkerOptions.parse(arguments)
        } throws: { error in
            WorkerOptions.message(for: error).contains(message)
        }
    }

    @Test func aBadAllowedHostIsRefusedWithTheSetting() throws {
        let options = try WorkerOptions.parse(["--metrics-allowed-host", "metrics.example:9101"])
        let error = #expect(throws: SettingError.self) { try options.alone }
        #expect(
            error?.description.hasPrefix(
                "MARQUEE_METRICS_ALLOWED_HOSTS (--metrics-allowed-host) from the command line: 'metrics.example:9101' has a port"
            ) == true
        )
    }

    @Test func theEnvironmentAndTheSettingsFileFillWhatNoFlagGives() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("worker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("marquee.env").path
        try Data("MARQUEE_BROKERS=file:9092\nMARQUEE_TOPIC_PREFIX=file.\nMARQUEE_SESSION_TIMEOUT=20s\n".utf8).write(
            to: URL(fileURLWithPath: path)
        )
        let options = try WorkerOptions.parse(["--config", path, "--topic-prefix", "flag.", "-X", "debug=cgrp,topic"])
        let settings = try options.resolved(environment: [
            "MARQUEE_BROKERS": "env:9092", "MARQUEE_KAFKA_PROPERTIES": "debug=all,client.rack=a",
        ])
        let configuration = settings.stageConfiguration(stage: "fetch", defaultConcurrency: 1)
        #expect(configuration.kafka.bootstrapServers == ["env:9092"])
        #expect(configuration.topics.main == "flag.fetch")
        #expect(settings.sessionTimeout == .seconds(20))
        #expect(
            configuration.kafka.additionalProperties == ["debug": "cgrp,topic", "client.rack": "a"],
            "-X wins, and keeps its commas"
        )

        let malformed = try WorkerOptions.parse([])
        let error = #expect(throws: SettingError.self) {
            try malformed.resolved(environment: ["MARQUEE_CONCURRENCY": "lots"])
        }
        #expect(
            error?.description
                == "MARQUEE_CONCURRENCY (--concurrency) 'lots' from the environment: expected a whole number from 0 to 100000"
        )
    }

    @Test func theStoreDeadlineIsEveryWorkers() throws {
        #expect(try WorkerOptions.parse([]).alone.storeDeadline == .seconds(30))
        #expect(try WorkerOptions.parse(["--store-timeout", "5"]).alone.storeDeadline == .seconds(5))
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
