import MarqueeCore
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct AnswerTests {
    @Test func anAnswerInTimeIsReturned() async throws {
        #expect(try await answer(within: .seconds(30)) { 42 } == 42)
        await #expect(throws: Oops.self) { try await answer(within: .seconds(30)) { throw Oops() } }
    }

    @Test func anOperationThatIgnoresCancellationDoesNotHoldTheCaller() async throws {
        let deaf = Deaf()
        let error = await #expect(throws: NoAnswer.self) {
            try await answer(within: .milliseconds(100)) { await deaf.wait() }
        }
        #expect(error?.timeout == .milliseconds(100))
        deaf.release()  // the operation ends by itself later
    }

    @Test func aCancelledCallerStopsWaiting() async throws {
        let deaf = Deaf()
        let (started, continuation) = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await answer(within: .seconds(3600)) {
                continuation.yield()
                await deaf.wait()
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        deaf.release()
    }
}

private struct Oops: Error {}

/// A wait that cancellation does not end.
private final class Deaf: Sendable {
    private let waiters = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = self.waiters.withLock { state in
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if now { continuation.resume() }
        }
    }

    func release() {
        let waiting = self.waiters.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
