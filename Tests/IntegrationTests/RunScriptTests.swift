import MarqueeCore
import MarqueeStore
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization
import struct Foundation.URL

/// `make run`'s script on a small crawl, with no consumer group set: it exits 0 once drained, and the store holds
/// what the emulator's catalogue says it must (computed here from the emulator itself, started alike).
@Suite(.serialized, .timeLimit(.minutes(10)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct RunScriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theDemoCrawlDrainsAndStoresWhatTheCatalogueHolds() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestEnvironment.uniqueName("make-run")
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:\(folder.path)/marquee.db"
        let keys = ["TMDB_API_KEY", "KOFIC_API_KEY", "KAKAO_REST_API_KEY"]
        var environment: [String: String?] = [
            "BIN": builtExecutablesFolder.path, "PAGES": "1", "METRICS_PORTS": "0,0,0", "MAX_WAIT": "5m",
            "RUN_LOGS": folder.appendingPathComponent("logs").path, "MARQUEE_BROKERS": TestEnvironment.brokers,
            "MARQUEE_TOPIC_PREFIX": TestEnvironment.uniqueName("mqrun") + ".", "MARQUEE_STORE": store,
            "MARQUEE_IMAGE_STORE": "file://\(folder.path)/images", "MARQUEE_CONFIG": nil,
            "MARQUEE_KAFKA_PROPERTIES": nil,
            "MARQUEE_SESSION_TIMEOUT": "6s",
        ]
        // No group named anywhere: the workers and `marquee drain` take the same default groups (<prefix><stage>);
        // the topic prefix keeps this run apart from the other tests.
        environment["MARQUEE_GROUP"] = String?.none
        for stage in ["FETCH", "IMAGES", "RECORDS"] { environment["MARQUEE_GROUP_\(stage)"] = String?.none }
        for key in keys { (environment[key], environment[key + "_FILE"]) = (String?.none, String?.none) }

        let run = try await runCommand(
            URL(fileURLWithPath: "/bin/bash"),
            [Self.repository.appendingPathComponent("scripts/run.sh").path],
            environment: environment,
            currentDirectory: Self.repository
        )
        #expect(run.status == 0, "make run failed:\n\(run.standardOutput)\n\(run.standardError)")
        #expect(run.standardOutput.contains("Drained after"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("No dead letters."), "\(run.standardOutput)")

        // What the same catalogue (same seed and sizes as scripts/run.sh) holds for the demo crawl.
        let emulator = try await UpstreamEmulatorProcess.start(arguments: ["--movies", "2000", "--books", "500"])
        defer { emulator.terminate() }
        var movieIDs: Set<Int> = []
        for list in ["popular", "now_playing"] {
            for language in ["ko-KR", "en-US"] {
                let page = try await getJSON(
                    "\(emulator.tmdbBaseURL)/movie/\(list)?page=1&language=\(language)&api_key=marquee-emulator"
                )
                movieIDs.formUnion((page["results"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int })
            }
        }
        let yesterday = try await day("yesterday")
        let lastWeek = try await day("7 days ago")
        let daily = try await getJSON(
            "\(emulator.koficBaseURL)/boxoffice/searchDailyBoxOfficeList.json?key=marquee-emulator&targetDt=\(yesterday)"
        )
        let weekly = try await getJSON(
            "\(emulator.koficBaseURL)/boxoffice/searchWeeklyBoxOfficeList.json?key=marquee-emulator&targetDt=\(lastWeek)&weekGb=0"
        )
        let dailyEntries = ((daily["boxOfficeResult"] as? [String: Any])?["dailyBoxOfficeList"] as? [Any])?.count ?? 0
        let weeklyEntries =
            ((weekly["boxOfficeResult"] as? [String: Any])?["weeklyBoxOfficeList"] as? [Any])?.count ?? 0
        let books = try await getJSON("\(emulator.openLibraryBaseURL)/search.json?q=night&page=1&limit=20")
        let bookCount = (books["docs"] as? [Any])?.count ?? 0
        #expect(movieIDs.count > 20 && dailyEntries == 10 && weeklyEntries == 10 && bookCount > 0)

        let opened = try Store.open(try StoreLocation(parsing: store), logger: .marqueeTest)
        let counts = try await opened.counts()
        let lineage = try await opened.lineageProgress()
        await opened.close()
        #expect(counts.movies == movieIDs.count)
        #expect(counts.movieTranslations == 2 * movieIDs.count, "a title per movie and language")
        #expect(counts.boxOfficeEntries == dailyEntries + weeklyEntries)
        #expect(counts.boxOfficeCharts == 2)
        #expect(counts.books == bookCount)
        #expect(counts.images > 0 && counts.imageVariants >= counts.images)
        #expect(lineage.isComplete && lineage.deadLettered == 0, "\(lineage)")
        #expect(lineage.roots == 7, "2 list pages × 2 languages, daily, weekly, book search: \(lineage)")
    }
}

/// `date -d <when> +%Y%m%d`, as the script computes its days.
private func day(_ when: String) async throws -> String {
    let run = try await runCommand(URL(fileURLWithPath: "/bin/date"), ["-d", when, "+%Y%m%d"])
    return String(run.standardOutput.filter(\.isNumber))
}

private func getJSON(_ url: String) async throws -> [String: Any] {
    let (status, body) = try await httpGet(url)
    #expect(status == 200, "\(url): \(status)")
    return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
}
