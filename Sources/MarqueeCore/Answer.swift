import Synchronization

/// Runs `operation` in a task of its own and returns its answer, or throws ``NoAnswer`` when it has not answered
/// within `timeout`, or `CancellationError` when the calling task is cancelled first.
///
/// Unlike a task group, which waits for every child, this does not wait for an operation that ignores
/// cancellation: the operation is cancelled and left to end by itself. For calls whose answer is optional (a
/// cache) and for tests that must fail, not hang, when a call never returns.
public func answer<T: Sendable>(
    within timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let answer = FirstAnswer<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            answer.wait(continuation)
            let work = Task {
                do {
                    answer.give(.success(try await operation()))
                } catch {
                    answer.give(.failure(error))
                }
            }
            let timer = Task {
                try await Task.sleep(for: timeout)
                answer.give(.failure(NoAnswer(timeout: timeout)))
            }
            // Whichever answer came first, the other task is no longer needed (cancelling the operation helps it
            // end sooner; a finished one ignores it).
            answer.onAnswer {
                timer.cancel()
                work.cancel()
            }
        }
    } onCancel: {
        answer.give(.failure(CancellationError()))
    }
}

/// An operation did not answer in time (``answer(within:_:)``).
public struct NoAnswer: RetriableError, Sendable {
    public let timeout: Duration
    public var description: String { "no answer within \(self.timeout)" }
    /// Whether asking again may help: yes, the answer may come in time then.
    public var isRetriable: Bool { true }
}

/// The first of several possible answers, handed to one waiting continuation.
private final class FirstAnswer<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var onAnswer: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = self.state.withLock { state in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Runs `action` when the answer comes (at once if it came already).
    func onAnswer(_ action: @escaping @Sendable () -> Void) {
        let now = self.state.withLock { state in
            guard state.result == nil else { return true }
            state.onAnswer = action
            return false
        }
        if now { action() }
    }

    func give(_ result: Result<T, any Error>) {
        let taken: (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?)? = self.state.withLock { state in
            guard state.result == nil else { return nil }
            state.result = result
            defer {
                state.continuation = nil
                state.onAnswer = nil
            }
            return (state.continuation, state.onAnswer)
        }
        guard let taken else { return }
        taken.0?.resume(with: result)
        taken.1?()
    }
}
