import Logging
import MarqueeCore
import MarqueeKafka
import MarqueeObservability
import MarqueePipeline
import MarqueeTestSupport
import ServiceLifecycle
import Synchronization
import Testing

import class Foundation.Pipe
import class Foundation.Process
import class Foundation.Thread
import struct Foundation.URL

/// Fetches a URL with curl, with `Host: host` when given and each of `headers` (`Name: value`): `(status, body)`.
///
/// curl runs and is waited for on a thread of its own: waiting on the cooperative pool (two threads here) would
/// starve every other test, and a server running in the test process itself could not answer.
func httpGet(_ url: String, host: String? = nil, headers: [String] = []) async throws -> (Int, String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try curlGet(url, host: host, headers: headers) })
        }.start()
    }
}

private func curlGet(_ url: String, host: String?, headers: [String]) throws -> (Int, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments =
        ["-s", "-w", "\n%{http_code}", "--max-time", "10"] + (host.map { ["-H", "Host: \($0)"] } ?? [])
        + headers.flatMap { ["-H", $0] } + [url]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
}

/// The value of one sample (`name{labels}`) in a Prometheus exposition.
func metricValue(_ exposition: String, _ sample: String) -> Double? {
    exposition.split(separator: "\n").lazy.compactMap { line in
        line.hasPrefix(sample + " ") ? Double(line.dropFirst(sample.count + 1)) : nil
    }.first
}

/// The listener of a stage process on a free port, which the stream reports once it listens.
func serve<H: StageHandler>(_ stage: Stage<H>, metrics: StageMetrics) -> (ObservabilityServer, AsyncStream<Int>) {
    let ports = AsyncStream<Int>.makeStream()
    let server = ObservabilityServer(stage: stage, metrics: metrics, port: 0, logger: .marqueeTest) {
        ports.continuation.yield($0)
    }
    return (server, ports.stream)
}

@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct ObservabilityTests {
    @Test func metricsCountWhatTheStageDidAndTheProbesAnswer() async throws {
        var configuration = testStageConfiguration()
        let prefix = configuration.topics.prefix
        let metrics = StageMetrics(stage: "fetch")
        configuration.report(to: metrics)
        let finished = AsyncStream<Void>.makeStream()
        let previous = configuration.onJobFinished
        configuration.onJobFinished = { report in
            previous?(report)
            finished.continuation.yield()
        }
        configuration.kafka.statisticsInterval = .milliseconds(100)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll(
            [configuration.topics, StageTopics(stage: "records", prefix: prefix, tiers: 0)],
            partitions: 2,
            admin: admin
        )
        let stage = Stage(
            configuration: configuration,
            handler: ClosureHandler { job in
                guard case .tmdbMovie(let id, _, _) = try FetchJob.decode(job.payload), id != 404 else {
                    throw StageError.permanent("HTTP 404")
                }
                return [
                    StageOutput(stage: "records", key: "k", payload: [1]),
                    StageOutput(stage: "records", key: "k", payload: [2]),
                ]
            },
            logger: .marqueeTest
        )
        let (server, ports) = serve(stage, metrics: metrics)
        let group = ServiceGroup(services: [stage, server], logger: .marqueeTest)
        let running = Task { try await group.run() }
        defer { running.cancel() }

        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        for id: Int64 in [1, 2, 404] {
            try await enqueue(.tmdbMovie(id: id, language: "en-US", follow: .none), to: configuration.topics)
        }
        var events = finished.stream.makeAsyncIterator()
        for _ in 0..<3 { _ = await events.next() }

        let (status, body) = try await httpGet("http://127.0.0.1:\(port)/metrics")
        #expect(status == 200)
        #expect(body.contains(#"marquee_stage_jobs_total{stage="fetch",kind="tmdb.movie",outcome="succeeded"} 2"#))
        #expect(body.contains(#"marquee_stage_jobs_total{stage="fetch",kind="tmdb.movie",outcome="dead_lettered"} 1"#))
        #expect(body.contains(#"marquee_stage_dlq_total{stage="fetch",kind="tmdb.movie",error_kind="permanent"} 1"#))
        #expect(body.contains(#"marquee_stage_outputs_total{stage="fetch"} 4"#))
        #expect(body.contains(#"marquee_stage_job_duration_seconds_count{stage="fetch"} 3"#))
        #expect(body.contains(#"marquee_stage_ready{stage="fetch"} 1"#))
        #expect(
            metricValue(body, #"marquee_stage_assigned_partitions{stage="fetch"}"#)
                == Double(2 * (1 + configuration.topics.tiers))
        )
        #expect(metricValue(body, #"marquee_stage_paused_partitions{stage="fetch"}"#) == 0)
        #expect(metricValue(body, #"marquee_stage_uncommitted{stage="fetch"}"#) == 0, "every job taken was finished")
        // The lag gauge follows librdkafka's statistics (its value depends on when they ran: ConsumerLagTests).
        #expect(body.contains(#"marquee_stage_consumer_lag{stage="fetch",topic="\#(configuration.topics.main)"} "#))
        #expect(try await httpGet("http://127.0.0.1:\(port)/healthz").0 == 200)
        #expect(try await httpGet("http://127.0.0.1:\(port)/readyz").0 == 200)
        #expect(try await httpGet("http://127.0.0.1:\(port)/nothing").0 == 404)

        await group.triggerGracefulShutdown()
        try await running.value
    }

    @Test func readyzSaysWhyWhileADependencyIsDown() async throws {
        var configuration = testStageConfiguration()
        configuration.shutdownTimeout = .seconds(2)
        configuration.dependencyRetry = .seconds(30) ... .seconds(30)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        _ = try await StageTopics.createAll([configuration.topics], partitions: 1, admin: admin)
        let refused = AsyncStream<Void>.makeStream()
        let succeeded = AsyncStream<Void>.makeStream()
        var finishingConfiguration = configuration
        finishingConfiguration.onJobFinished = { _ in succeeded.continuation.yield() }
        let stage = Stage(
            configuration: finishingConfiguration,
            handler: ClosureHandler { job in
                guard case .tmdbGenres = try FetchJob.decode(job.payload) else { return [] }
                refused.continuation.yield()
                throw StageError.dependencyDown("the store", "connection refused")
            },
            logger: .marqueeTest
        )
        let metrics = StageMetrics(stage: "fetch")
        let (server, ports) = serve(stage, metrics: metrics)
        let group = ServiceGroup(services: [stage, server], logger: .marqueeTest)
        let running = Task { try await group.run() }
        defer { running.cancel() }
        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        // Not ready before the group assigned partitions; ready once a job ran.
        try await enqueue(.tmdbMovie(id: 1, language: "en-US", follow: .none), to: configuration.topics)
        var successes = succeeded.stream.makeAsyncIterator()
        _ = await successes.next()
        #expect(try await httpGet("http://127.0.0.1:\(port)/readyz").0 == 200)

        try await enqueue(.tmdbGenres(language: "en-US"), to: configuration.topics)
        var refusals = refused.stream.makeAsyncIterator()
        _ = await refusals.next()
        // The refusal pauses the stage right after the handler threw; ask until the probe says so.
        var answer = try await httpGet("http://127.0.0.1:\(port)/readyz")
        for _ in 0..<50 where answer.0 == 200 {
            try await Task.sleep(for: .milliseconds(20))  // a bounded poll of an HTTP probe, not a synchronisation
            answer = try await httpGet("http://127.0.0.1:\(port)/readyz")
        }
        #expect(answer.0 == 503)
        #expect(answer.1.hasPrefix("the store is down since 20"), "what is down and since when: \(answer.1)")
        #expect(answer.1.contains("Z: connection refused"), "\(answer.1)")
        #expect(try await httpGet("http://127.0.0.1:\(port)/healthz").0 == 200, "alive while not ready")
        let metricsWhileDown = try await httpGet("http://127.0.0.1:\(port)/metrics").1
        #expect(metricsWhileDown.contains(#"marquee_stage_ready{stage="fetch"} 0"#))
        #expect(
            metricValue(metricsWhileDown, #"marquee_stage_paused_partitions{stage="fetch"}"#)
                == Double(1 + configuration.topics.tiers),
            "the main topic and every tier paused"
        )

        // The paused job is still "in flight" (waiting out its 30 s backoff): shutdown must not wait for it
        // longer than the 2 s shutdown timeout.
        let clock = ContinuousClock()
        let stopAt = clock.now
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(clock.now - stopAt < .seconds(10), "the shutdown timeout bounds the wait for in-flight jobs")
    }
}
