import MarqueeCore
import MarqueeTestSupport
import Testing

import struct Foundation.Data
import class Foundation.FileManager

/// `marquee enqueue kofic-movies` and `kofic.movies` JSON lines, as the process builds them (`--dry-run`).
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct KOFICCatalogueCLITests {
    @Test func theIssuesCommandMakesOneCrawlOfTheOpeningYears() async throws {
        let run = try await runMarquee([
            "enqueue", "kofic-movies", "--open-from", "2020", "--open-to", "2024", "--details", "--images", "--dry-run",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let jobs = try run.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) }
        #expect(
            jobs == [
                .koficMovies(
                    query: .init(openFrom: 2020, openTo: 2024),
                    page: 1,
                    follow: Follow(details: true, images: true)
                )
            ]
        )
        #expect(run.standardError.contains("kofic.movies  1"))
    }

    @Test func everyFilterReachesTheJob() async throws {
        let run = try await runMarquee([
            "enqueue", "kofic-movies", "--production-from", "2019", "--production-to", "2019", "--title", "기생충",
            "--director", "봉준호", "--per-page", "20", "--pages", "3", "--dry-run",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let jobs = try run.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) }
        #expect(
            jobs == [
                .koficMovies(
                    query: .init(
                        productionFrom: 2019,
                        productionTo: 2019,
                        title: "기생충",
                        director: "봉준호",
                        perPage: 20,
                        lastPage: 3
                    ),
                    page: 1,
                    follow: .none
                )
            ]
        )
    }

    @Test(arguments: [
        (["--open-from", "2024", "--open-to", "2020"], "--open-to 2020 is before --open-from 2024"),
        (["--open-from", "24"], "--open-from must be a year from 1870 to 2200, not 24"),
        (["--open-from", "twenty"], "--open-from"),
        (["--per-page", "101"], "--per-page must be from 1 to 100, not 101"),
        (["--pages", "1001"], "--pages must be from 1 to 1000, not 1001"),
    ])
    func badFlagsAreUsageErrors(arguments: [String], message: String) async throws {
        let run = try await runMarquee(["enqueue", "kofic-movies"] + arguments + ["--dry-run"])
        #expect(run.status == 64)
        #expect(run.standardError.contains(message), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func jsonLinesNameTheCrawlAndABadOneSendsNothing() async throws {
        let path = "/tmp/\(TestEnvironment.uniqueName("kofic-movies")).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let good = #"{"v":1,"kind":"kofic.movies","open_from":2020,"open_to":2024,"follow":{"details":true}}"#
        #expect(FileManager.default.createFile(atPath: path, contents: Data(good.utf8)))
        let run = try await runMarquee(["enqueue", "--file", path, "--dry-run"])
        #expect(run.status == 0, "\(run.standardError)")
        let jobs = try run.standardOutput.split(separator: "\n").map { try FetchJob.decode(Array($0.utf8)) }
        #expect(
            jobs == [.koficMovies(query: .init(openFrom: 2020, openTo: 2024), page: 1, follow: Follow(details: true))]
        )

        let bad = #"{"v":1,"kind":"kofic.movies","open_from":2024,"open_to":2020}"#
        #expect(FileManager.default.createFile(atPath: path, contents: Data((good + "\n" + bad).utf8)))
        let refused = try await runMarquee(["enqueue", "--file", path, "--dry-run"])
        #expect(refused.status == 65)
        #expect(refused.standardError.contains("line 2"), "\(refused.standardError)")
        #expect(refused.standardError.contains("open_to 2020 is before open_from 2024"), "\(refused.standardError)")
        #expect(refused.standardOutput.isEmpty)
    }
}
