import MarqueeCore
import MarqueeHTTP
import MarqueeJSON
import MarqueeTestSupport
import Testing

import class Foundation.FileManager
import class Foundation.ProcessInfo
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// A real browser against a running pipeline: the built `marquee dashboard` serves the pipeline of
/// ``DashboardPipeline``; headless Chromium loads the page, runs its script, and the DOM it ends with holds the
/// known numbers; then it takes a screenshot.
///
/// `MARQUEE_DASHBOARD_SCREENSHOT=docs/dashboard.png` keeps the screenshot there (the README's picture).
@Suite(
    .serialized,
    .timeLimit(.minutes(3)),
    .enabled(if: TestEnvironment.isIntegrationEnabled),
    .enabled(if: Chromium.path != nil, "chromium is not installed: scripts/setup.sh installs it (Debian `chromium`)")
)
struct DashboardBrowserTests {
    @Test func chromiumShowsTheChartsAndTheKnownNumbers() async throws {
        let pipeline = try await DashboardPipeline.start()
        defer { pipeline.removeFiles() }
        let serving = AsyncStream<String>.makeStream()
        let process = try ChildProcess(
            "marquee",
            arguments: ["dashboard", "--address", "127.0.0.1:0", "--interval", "1s", "--samples", "3"],
            environment: pipeline.settings.merging(["MARQUEE_GRAFANA_URL": "http://127.0.0.1:3000/d/marquee"]) { $1 },
            readsStandardError: true
        ) { line in
            if let range = line.range(of: "serving ") {
                serving.continuation.yield(String(line[range.upperBound...].prefix { $0 != " " }))
            }
        }
        var lines = serving.stream.makeAsyncIterator()
        let url = try #require(await lines.next(), "marquee dashboard says where it serves")

        // The dashboard samples every second: wait until its samples show the worker ready.
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        http.prefersHTTP2 = false
        let fetcher = try HTTPFetcher(configuration: http, logger: .marqueeTest)
        let deadline = ContinuousClock.now + .seconds(60)
        var isReady = false
        while ContinuousClock.now < deadline, !isReady {
            let answer = try await fetcher.fetch(FetchRequest(url: url + "api/workers", limitKey: "dashboard"))
            let workers = try JSONValue.parse(answer.body)["workers"]?.list ?? []
            isReady = workers.contains { $0["address"]?.text == pipeline.workerAddress && $0["state"]?.text == "ready" }
            if !isReady { try await Task.sleep(for: .milliseconds(250)) }  // polling the process, not synchronisation
        }
        #expect(isReady, "the dashboard saw the records worker ready")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("mqd-chromium")
        ).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let browser = try #require(Chromium.path)
        let common = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(folder)/profile",
            "--virtual-time-budget=4000",
        ]
        // The DOM after the page's script ran (it marks <body data-ready>) and the charts were drawn.
        let dump = try await runCommand(
            URL(fileURLWithPath: browser),
            common + ["--window-size=1280,1600", "--dump-dom", url]
        )
        #expect(dump.status == 0, "\(dump.standardError.suffix(2000))")
        let dom = dump.standardOutput
        #expect(dom.contains("data-ready=\"true\""), "the page's script ran")
        #expect(dom.contains("data-refreshed=\""), "the script refreshed the content (every 2 s) within the budget")
        #expect(dom.components(separatedBy: "<svg class=\"chart\"").count - 1 == 6, "two charts per stage")
        #expect(dom.contains("<path class=\"chart-line\""))
        for expected in [
            "data-test=\"fetch-lag\">10<", "data-test=\"fetch-due\">7<", "data-test=\"fetch-status\">STOPPED<",
            "data-test=\"fetch-tier-1-overdue\">2<", "data-test=\"fetch-tier-1-not-due\">3<",
            "data-test=\"dlq-total\">3<", "data-test=\"dlq-fetch\">2<", "data-test=\"dlq-records\">1<",
            "data-test=\"store-movies\">3<", "data-test=\"store-books\">2<", "data-test=\"store-images\">1<",
            "data-test=\"worker-\(pipeline.workerAddress)-state\">ready<", "href=\"http://127.0.0.1:3000/d/marquee\"",
        ] {
            #expect(dom.contains(expected), "\(expected)")
        }

        let screenshot = folder + "/dashboard.png"
        // The whole page on a desktop window, and the top of it on a phone's width.
        let narrow = folder + "/dashboard-narrow.png"
        for (file, size) in [(screenshot, "1280,2300"), (narrow, "390,1400")] {
            let shot = try await runCommand(
                URL(fileURLWithPath: browser),
                common + ["--window-size=\(size)", "--screenshot=\(file)", url]
            )
            #expect(shot.status == 0, "\(shot.standardError.suffix(2000))")
            let png = try #require(FileManager.default.contents(atPath: file), "the screenshot was written")
            #expect(png.count > 10_000, "a real picture, not an empty file: \(png.count) bytes")
            #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG")
        }
        if let keep = Chromium.environment["MARQUEE_DASHBOARD_SCREENSHOT"], !keep.isEmpty {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
        if let keep = Chromium.environment["MARQUEE_DASHBOARD_SCREENSHOT_NARROW"], !keep.isEmpty {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: narrow, toPath: keep)
        }

        process.signal(SIGTERM)
        #expect(await process.waitForExit() == 0, "marquee dashboard stops on SIGTERM")
        await pipeline.stop()
    }
}

/// Where Debian's `chromium` is, if installed.
enum Chromium {
    static let environment = ProcessInfo.processInfo.environment

    static let path: String? = {
        let candidates = [environment["MARQUEE_CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}
