import MarqueeCore
import MarqueeKafka
import MarqueePipeline
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.FileManager

/// `marquee enqueue` as a process against the real broker: flags and JSON lines land as the right payloads and
/// root envelopes; an input with a bad line sends nothing.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct EnqueueCLITests {
    @Test func flagsAndJSONLinesLandAsRootJobsAndABadLineSendsNothing() async throws {
        let prefix = TestEnvironment.uniqueName("mqq") + "."
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 0)
        let admin = try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        // One partition: the order of arrival is the order of sending.
        _ = try await StageTopics.createAll([fetch], partitions: 1, admin: admin)
        let path = "/tmp/\(TestEnvironment.uniqueName("jobs")).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }

        // A bad line among good ones: exit 65, each bad line named, nothing sent.
        #expect(
            FileManager.default.createFile(
                atPath: path,
                contents: Data(
                    """
                    {"v":1,"kind":"tmdb.movie","id":550,"language":"ko-KR"}
                    {"v":1,"kind":"tmdb.movie","id":"550","language":"ko-KR"}

                    {"v":1,"kind":"openlibrary.search","q":"swift","page":1,"limit":20}
                    """.utf8
                )
            )
        )
        let bad = try await runMarquee([
            "enqueue", "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix, "--file", path,
        ])
        #expect(bad.status == 65)
        #expect(bad.standardError.contains("line 2: field 'id'"), "\(bad.standardError)")
        #expect(bad.standardError.contains("nothing was sent"))

        // Flags: two pages in two languages, with details.
        let flags = try await runMarquee([
            "enqueue", "tmdb-list", "popular", "--pages", "1-2", "--language", "ko-KR,en-US", "--details",
            "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix,
        ])
        #expect(flags.status == 0, "\(flags.standardError)")
        #expect(flags.standardError.contains("4 jobs sent to \(fetch.main)"))
        let roots = flags.standardOutput.split(separator: "\n").map(String.init)
        #expect(roots.count == 4)

        // JSON lines, all good now.
        #expect(
            FileManager.default.createFile(
                atPath: path,
                contents: Data(
                    """
                    {"v":1,"kind":"tmdb.movie","id":550,"language":"ko-KR"}
                    {"v":1,"kind":"openlibrary.search","q":"swift","page":1,"limit":20}
                    """.utf8
                )
            )
        )
        let lines = try await runMarquee([
            "enqueue", "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix, "--file", path,
        ])
        #expect(lines.status == 0, "\(lines.standardError)")

        let messages = try await read(6, from: fetch.main)
        let jobs = try messages.map { try FetchJob.decode($0.value) }
        #expect(
            jobs[0] == .tmdbList(list: .popular, page: 1, language: "ko-KR", region: nil, follow: Follow(details: true))
        )
        #expect(
            jobs[3] == .tmdbList(list: .popular, page: 2, language: "en-US", region: nil, follow: Follow(details: true))
        )
        #expect(jobs[4] == .tmdbMovie(id: 550, language: "ko-KR", follow: .none))
        #expect(jobs[5].kind == "openlibrary.search")
        for (index, message) in messages.enumerated() {
            let envelope = try envelope(of: message)
            #expect(envelope.root == envelope.id && envelope.parent == nil && envelope.attempt == 1)
            #expect(message.keyString == jobs[index].dedupeKey)
            if index < 4 { #expect(envelope.id.description == roots[index]) }
        }
        // Each root says why: the lists are `list`, a detail asked for by hand `request`, and so is anything else.
        #expect(try messages.map { try envelope(of: $0).refresh } == [.list, .list, .list, .list, .request, .request])
    }

    @Test(arguments: [
        (
            ["tmdb-movie", "496243", "27205", "--language", "ko-KR,en-US", "--reviews"],
            [
                FetchJob.tmdbMovie(id: 496243, language: "ko-KR", follow: Follow(reviews: true)),
                .tmdbMovie(id: 27205, language: "ko-KR", follow: Follow(reviews: true)),
                .tmdbMovie(id: 496243, language: "en-US", follow: Follow(reviews: true)),
                .tmdbMovie(id: 27205, language: "en-US", follow: Follow(reviews: true)),
            ]
        ),
        (
            ["tmdb-reviews", "550", "--pages", "3"],
            [.tmdbReviews(id: 550, page: 1, language: "en-US", follow: Follow(pages: 3))]
        ),
        (
            ["tmdb-genres", "--language", "ko-KR,en-US"],
            [.tmdbGenres(language: "ko-KR"), .tmdbGenres(language: "en-US")]
        ),
        (
            ["kofic-weekly", "--from", "2024-02-26", "--to", "2024-03-10", "--period", "weekend", "--details"],
            [
                .koficWeeklyBoxOffice(date: "20240226", week: .weekend, follow: Follow(details: true)),
                .koficWeeklyBoxOffice(date: "20240304", week: .weekend, follow: Follow(details: true)),
            ]
        ),
        (
            ["kofic-daily", "--from", "2024-02-28", "--to", "2024-03-01"],
            [
                .koficDailyBoxOffice(date: "20240228", follow: .none),
                .koficDailyBoxOffice(date: "20240229", follow: .none),
                .koficDailyBoxOffice(date: "20240301", follow: .none),
            ]
        ),
        (
            ["tmdb-changes", "--from", "2024-03-01", "--to", "2024-03-20", "--language", "ko-KR,en-US", "--images"],
            [
                .tmdbChanges(
                    startDate: "2024-03-01",
                    endDate: "2024-03-14",
                    page: 1,
                    languages: ["ko-KR", "en-US"],
                    follow: Follow(images: true)
                ),
                .tmdbChanges(
                    startDate: "2024-03-15",
                    endDate: "2024-03-20",
                    page: 1,
                    languages: ["ko-KR", "en-US"],
                    follow: Follow(images: true)
                ),
            ]
        ),
        (["kofic-movie", "20183782", "--images"], [.koficMovie(code: "20183782", follow: Follow(images: true))]),
        (
            ["kakao-poster", "기생충 2019", "--movie-code", "20183782"],
            [.kakaoPoster(query: "기생충 2019", movieCode: "20183782")]
        ),
        (
            ["openlibrary-work", "OL45804W", "--images"],
            [.openLibraryWork(id: "OL45804W", follow: Follow(images: true))]
        ),
    ])
    func eachSubcommandBuildsItsJobs(arguments: [String], expected: [FetchJob]) async throws {
        let run = try await runMarquee(["enqueue"] + arguments + ["--dry-run"])
        #expect(run.status == 0, "\(run.standardError)")
        let jobs = try run.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) }
        #expect(jobs == expected)
    }

    @Test(arguments: [
        (["kofic-weekly", "--from", "2024-01-01", "--period", "month"], "--period must be week, weekend or weekdays"),
        (["kofic-daily", "--from", "2024-02-30"], "--from and --to must be days as YYYY-MM-DD"),
        (["openlibrary-work", "45804"], "field 'id'"),
        (["tmdb-movie"], "Missing expected argument"),
        (["tmdb-movie", "0"], "field 'id': expected an integer from 1"),
        (["tmdb-changes", "--from", "2024-03-02", "--to", "2024-03-01"], "--to is before --from"),
        (["tmdb-changes", "--from", "2024-03-01", "--language", "en,en"], "field 'languages[1]'"),
    ])
    func badFlagsAreUsageErrors(arguments: [String], message: String) async throws {
        let run = try await runMarquee(["enqueue"] + arguments + ["--dry-run"])
        #expect(run.status == 64)
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }
}

extension EnqueueCLITests {
    @Test func hostileLinesAreEachNamedShortlyAndNothingIsSent() async throws {
        let prefix = TestEnvironment.uniqueName("mqh") + "."
        let fetch = StageTopics(stage: "fetch", prefix: prefix, tiers: 0)
        _ = try await StageTopics.createAll(
            [fetch],
            partitions: 1,
            admin: try KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest)
        )
        let huge = String(repeating: "x", count: 300_000)
        let lines = [
            #"{"v":1,"kind":"tmdb.list","list":"popular","page":-1}"#,
            #"{"v":1,"kind":"tmdb.list","list":"popular","page":99999999999999999999999}"#,
            #"{"v":1,"kind":"tmdb.search","query":"\#(huge)"}"#,
            #"{"v":1,"kind":"tmdb.search","query":"a\u0000b"}"#,
            #"{"v":1,"kind":"kofic.boxoffice.daily","date":"20241345"}"#,
            #"{"v":1,"kind":"tmdb.movie","id":"1; DROP TABLE movies"}"#,
            #"{"v":1,"kind":"openlibrary.search","q":"<script>alert(1)</script>","page":1,"limit":100000}"#,
            #"{"v":1,"kind":"tmdb.movie","id":550,"id":551}"#,
            "\u{1B}[2J\u{7}not json at all",
            String(decoding: [0xFF, 0xFE, 0x00, 0x41], as: UTF8.self),
            #"{"v":1,"kind":"tmdb.search","query":"'; DROP TABLE movies; --"}"#,  // a valid search for odd words
        ]
        let path = "/tmp/\(TestEnvironment.uniqueName("hostile")).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(lines.joined(separator: "\n").utf8)))

        let run = try await runMarquee([
            "enqueue", "--brokers", TestEnvironment.brokers, "--topic-prefix", prefix, "--file", path,
        ])
        #expect(run.status == 65)
        let reported = run.standardError.split(separator: "\n").filter { $0.hasPrefix("marquee: line ") }
        #expect(
            reported.map { $0.split(separator: ":")[1] } == (1...10).map { " line \($0)" },
            "\(run.standardError.prefix(2000))"
        )
        #expect(run.standardError.count < 4_000, "reasons are short: the input is not echoed")
        #expect(run.standardError.contains("10 bad lines: nothing was sent"))
        #expect(
            try await KafkaAdmin(configuration: TestEnvironment.kafka, logger: .marqueeTest).watermarks(
                topic: fetch.main
            ).values.allSatisfy { $0.end == 0 }
        )

        // Hostile flags are usage errors, never crashes.
        for arguments in [
            ["tmdb-list", "popular", "--pages", "99999999999999999999"], ["tmdb-list", "popular", "--pages", "5-1"],
            ["kofic-daily", "--from", "2024-02-30"], ["kofic-daily", "--from", "0000-01-01"],
            ["tmdb-search", String(huge.prefix(100_000))],
            ["openlibrary-search", "swift", "--limit", "-3"], ["tmdb-movie", "99999999999999"],
        ] {
            let flags = try await runMarquee(["enqueue"] + arguments + ["--dry-run"])
            #expect(flags.status == 64, "\(arguments.prefix(3)): \(flags.standardError.prefix(300))")
            #expect(flags.standardError.count < 2_000)
        }
    }
}

/// Runs the built `marquee` with `arguments` to its end.
func runMarquee(_ arguments: [String]) async throws -> CommandRun {
    try await runBuiltExecutable("marquee", arguments)
}
