import Foundation
import Logging
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// A login PostgreSQL refuses at once (no such database, no such role) fails the store's call at once with
/// PostgreSQL's own reason, instead of waiting for the deadline and reporting a server that did not answer.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct PostgresLoginTests {
    /// A deadline no refusal should come near: without the login check, the call would wait all of it.
    static let deadline = Duration.seconds(60)

    /// The stack's PostgreSQL URL with `user` and `database` in place of its own.
    static func location(user: String? = nil, database: String) throws -> StoreLocation {
        var url = URLComponents(string: TestEngine.postgresURL)!
        if let user { url.user = user }
        url.path = "/" + database
        url.query = "sslmode=disable"
        return try StoreLocation(parsing: url.string!)
    }

    /// Runs `call` on `store` and returns its error and how long it took.
    static func failure(of store: Store, _ call: (Store) async throws -> Void) async throws -> (StoreError, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: StoreError.self) { try await call(store) }
        return (try #require(error), start.duration(to: clock.now))
    }

    static func open(_ location: StoreLocation) throws -> Store {
        try Store.open(location, maximumConnections: 2, timeout: Self.deadline, logger: .marqueeTest)
    }

    @Test func aDatabaseThatDoesNotExistFailsAtOnceWithPostgresReason() async throws {
        let name = "nope_\(UUID().uuidString.prefix(8).lowercased())"
        let store = try Self.open(try Self.location(database: name))
        let (error, elapsed) = try await Self.failure(of: store) { try await $0.ping() }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("database \"\(name)\" does not exist [3D000]"), "\(error)")
        #expect(error.message.contains("refused the connection"), "\(error)")
        #expect(!error.message.contains("did not answer"), "\(error)")
        #expect(elapsed < Self.deadline / 2, "failed after \(elapsed), not at the deadline")

        // Every call says so (here a migration's transaction), not only the first.
        let (again, againElapsed) = try await Self.failure(of: store) { _ = try await $0.migrate() }
        #expect(again.message.contains("[3D000]"), "\(again)")
        #expect(againElapsed < Self.deadline / 2, "failed after \(againElapsed), not at the deadline")
        await store.close()
    }

    @Test func aRoleThatDoesNotExistFailsAtOnce() async throws {
        let role = "nobody_\(UUID().uuidString.prefix(8).lowercased())"
        let store = try Self.open(try Self.location(user: role, database: "marquee"))
        let (error, elapsed) = try await Self.failure(of: store) { try await $0.ping() }
        await store.close()
        #expect(error.code == .unavailable)
        // Trust authentication names the role (28000); password authentication asks for the password first.
        let roleMissing = error.message.contains("role \"\(role)\" does not exist [28000]")
        let passwordAsked = error.message.contains("asks for a password") || error.message.contains("[28P01]")
        #expect(roleMissing || passwordAsked, "\(error)")
        #expect(elapsed < Self.deadline / 2, "failed after \(elapsed), not at the deadline")
    }

    @Test func aWorkingStoreIsUnaffected() async throws {
        let store = try Self.open(try StoreLocation(parsing: TestEngine.postgresURL))
        try await store.ping()
        try await store.ping()
        await store.close()
    }
}
