import Foundation
import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

/// The recorded upstream responses in `Tests/Fixtures` (a copy of the shared fixtures; see its MANIFEST.md), or
/// in `$MARQUEE_FIXTURES`.
enum Fixtures {
    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String {
            "fixture '\(path)' not found: the MarqueeSources tests need the recorded responses in "
                + "Tests/Fixtures or $MARQUEE_FIXTURES (\(Fixtures.root.path))"
        }
    }

    /// `Tests/Fixtures`, found from this file's path, unless `MARQUEE_FIXTURES` names another folder.
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["MARQUEE_FIXTURES"] {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // MarqueeSourcesTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures", isDirectory: true)
    }()

    /// The bytes of `relativePath` (e.g. `tmdb/genre_movie_list.json`).
    ///
    /// - Throws: ``Missing`` with a clear message when the fixtures are not there, so tests fail rather than
    ///   pass silently.
    static func bytes(_ relativePath: String) throws -> [UInt8] {
        let url = Self.root.appendingPathComponent(relativePath)
        guard let data = FileManager.default.contents(atPath: url.path) else { throw Missing(path: relativePath) }
        return Array(data)
    }

    /// Every fixture file below `directory`, as relative paths, sorted.
    static func files(in directory: String) throws -> [String] {
        let url = Self.root.appendingPathComponent(directory)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else {
            throw Missing(path: directory)
        }
        return names.sorted().map { "\(directory)/\($0)" }
    }

    /// A 200 response with the fixture's body.
    static func response(_ relativePath: String, status: Int = 200) throws -> SourceResponse {
        SourceResponse(
            status: status,
            headers: [(name: "content-type", value: "application/json")],
            body: try self.bytes(relativePath)
        )
    }
}

/// A configuration with keys, pointing at the public hosts.
let testConfiguration: SourceConfiguration = {
    var configuration = SourceConfiguration()
    configuration.tmdbAPIKey = Secret("tmdb-SECRET-0123")
    configuration.koficAPIKey = Secret("kofic-SECRET-4567")
    configuration.kakaoAPIKey = Secret("kakao-SECRET-89ab")
    configuration.tmdbSessions = ["default": Secret("session-SECRET-cdef")]
    return configuration
}()

let testAdapters = SourceAdapters(configuration: testConfiguration)

/// 2024-03-01T12:00:00Z in epoch milliseconds.
let testFetchedAt: Int64 = 1_709_294_400_000

extension SourceResult {
    /// The record with `key`.
    func record(_ key: String) -> Record? {
        self.records.first { $0.key == key }
    }

    /// The records of `kind`.
    func records(_ kind: Record.Kind) -> [Record] {
        self.records.filter { $0.kind == kind }
    }
}

/// Parses a fixture for a job through the router.
func parse(_ fixture: String, for job: FetchJob, status: Int = 200) throws -> SourceResult {
    try testAdapters.parse(try Fixtures.response(fixture, status: status), for: job, fetchedAt: testFetchedAt)
}

/// The error parsing `response` for `job` throws, if any.
func parseError(_ response: SourceResponse, for job: FetchJob, adapters: SourceAdapters = testAdapters) -> SourceError?
{
    do {
        _ = try adapters.parse(response, for: job, fetchedAt: testFetchedAt)
        return nil
    } catch {
        return error
    }
}

/// A response with a UTF-8 body.
func response(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> SourceResponse {
    SourceResponse(status: status, headers: headers, body: Array(body.utf8))
}

extension Optional where Wrapped == JSONValue {
    /// The string, for comparisons in tests.
    var string: String? {
        if case .string(let value)? = self { return value }
        return nil
    }
}
