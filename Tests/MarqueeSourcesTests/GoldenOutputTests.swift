import Foundation
import Testing

/// The exact bytes every fixture yields, pinned: ``GoldenCases`` rendered now must equal
/// `Tests/Fixtures/goldens/fetch-outputs.txt`,
/// which the code before the JSON reader, the payload checks, the TMDB parser and the encoders were made faster
/// wrote (make bench-fetch: the same records, follow-ups, skipped follow-ups and errors, byte for byte).
/// `MARQUEE_WRITE_GOLDENS=1` rewrites the file (only for a change that is meant to change the bytes).
@Suite struct GoldenOutputTests {
    /// In `Tests/Fixtures` (no target's folder, so not a resource of this one).
    static let goldenURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // MarqueeSourcesTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Fixtures/goldens/fetch-outputs.txt")

    @Test func outputsEqualTheGoldens() throws {
        let rendered = try GoldenCases.render(fixturesRoot: Fixtures.root)
        if ProcessInfo.processInfo.environment["MARQUEE_WRITE_GOLDENS"] == "1" {
            try FileManager.default.createDirectory(
                at: Self.goldenURL.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(rendered.utf8).write(to: Self.goldenURL)
            return
        }
        let golden = try #require(
            FileManager.default.contents(atPath: Self.goldenURL.path).map { String(decoding: $0, as: UTF8.self) },
            "missing \(Self.goldenURL.path)"
        )
        let expected = golden.split(separator: "\n", omittingEmptySubsequences: false)
        let actual = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(actual.count == expected.count)
        for (index, (got, want)) in zip(actual, expected).enumerated() where got != want {
            Issue.record("line \(index + 1) differs:\n got: \(got)\nwant: \(want)")
            break
        }
    }
}
