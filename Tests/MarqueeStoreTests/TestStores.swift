import Foundation
import Logging
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// The engines a store test runs on: SQLite always; PostgreSQL (the local stack's, a new database per test)
/// when integration tests are on.
enum TestEngine: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case sqlite
    case postgres

    static var enabled: [TestEngine] { TestEnvironment.isIntegrationEnabled ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { self.rawValue }

    /// The stack's PostgreSQL: `MARQUEE_TEST_POSTGRES`, else `postgres://marquee@127.0.0.1:15432/marquee`.
    static var postgresURL: String {
        ProcessInfo.processInfo.environment["MARQUEE_TEST_POSTGRES"] ?? "postgres://marquee@127.0.0.1:15432/marquee"
    }

    /// The deadline of the tests' store operations: far past what any of them takes, so a test run that starves
    /// PostgreSQL and the test process at its start (hundreds of tests and their child processes on two cores)
    /// does not fail a test on what it does not test. A hang still ends at the suites' time limits.
    static let patientTimeout = Duration.seconds(120)

    /// A new, empty store location of this engine.
    func freshLocation() async throws -> StoreLocation {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("marquee-store-\(UUID().uuidString.prefix(8)).db").path
            return try StoreLocation(parsing: "sqlite:\(path)")
        case .postgres:
            let name = "marquee_test_\(UUID().uuidString.prefix(8).lowercased())"
            let admin = try Store.open(
                try StoreLocation(parsing: Self.postgresURL),
                maximumConnections: 1,
                timeout: Self.patientTimeout,
                logger: .marqueeTest
            )
            _ = try await admin.engine.read("CREATE DATABASE \(name)", [])
            await admin.close()
            var url = Self.postgresURL
            url = String(url[..<url.lastIndex(of: "/")!]) + "/\(name)?sslmode=disable"
            return try StoreLocation(parsing: url)
        }
    }

    /// Runs `body` with a new, migrated store of this engine, closed afterwards.
    func withStore<T>(_ body: (Store) async throws -> T) async throws -> T {
        let store = try Store.open(try await self.freshLocation(), timeout: Self.patientTimeout, logger: .marqueeTest)
        do {
            _ = try await store.migrate()
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}
