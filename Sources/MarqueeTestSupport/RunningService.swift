public import Logging
public import ServiceLifecycle

/// Runs `service` (an in-process server) while `body` runs, then ends it by graceful shutdown, as SIGTERM ends a
/// worker's. Cancelling a server's task instead can trap in swift-nio ("Deinited NIOAsyncWriter without calling
/// finish()") when a connection it accepted is still waiting to be served (apple/swift-nio#3481).
public func withRunningService<Result: Sendable>(
    _ service: some Service,
    logger: Logger,
    _ body: () async throws -> Result
) async throws -> Result {
    let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        let result: Result
        do {
            result = try await body()
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return result
    }
}
