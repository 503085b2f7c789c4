import Synchronization
import Testing

@testable import MarqueeImageStage

/// One run per key for concurrent callers; the run belongs to the caller that leads it.
@Suite(.timeLimit(.minutes(1)))
struct SharedWorkTests {
    /// A gate the work waits at, and a count of the runs that started.
    final class Gate: Sendable {
        private let state = Mutex<(runs: Int, open: Bool, waiting: [CheckedContinuation<Void, Never>])>((0, false, []))

        var runs: Int { self.state.withLock { $0.runs } }

        func pass() async {
            await withCheckedContinuation { continuation in
                let open = self.state.withLock { state in
                    state.runs += 1
                    if !state.open { state.waiting.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiting = self.state.withLock { state in
                state.open = true
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    static func until(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func concurrentCallersForOneKeyShareOneRun() async throws {
        let work = SharedWork<String, Int>()
        let gate = Gate()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    try await work.run(key: "a") {
                        await gate.pass()
                        return 42
                    }
                }
            }
            // The four others wait for the first run, not running their own.
            try await Self.until { gate.runs == 1 && work.waiting("a") == 4 }
            #expect(gate.runs == 1)
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == [42, 42, 42, 42, 42])
        #expect(gate.runs == 1)
    }

    @Test func aCancelledLeaderHandsTheWorkToAWaiter() async throws {
        let work = SharedWork<String, Int>()
        let gate = Gate()
        let leader = Task {
            try await work.run(key: "a") {
                await gate.pass()
                try Task.checkCancellation()
                return 1
            }
        }
        try await Self.until { gate.runs == 1 }
        let waiter = Task {
            try await work.run(key: "a") {
                await gate.pass()
                try Task.checkCancellation()
                return 2
            }
        }
        try await Self.until { work.waiting("a") == 1 }
        leader.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await leader.value }
        // The waiter was not cancelled: it ran the work itself instead of failing with the leader's cancellation.
        #expect(try await waiter.value == 2)
        #expect(gate.runs == 2)
    }

    @Test func aCancelledWaiterStopsWaitingAndTheLeaderGoesOn() async throws {
        let work = SharedWork<String, Int>()
        let gate = Gate()
        let leader = Task {
            try await work.run(key: "a") {
                await gate.pass()
                return 1
            }
        }
        try await Self.until { gate.runs == 1 }
        let waiter = Task {
            try await work.run(key: "a") {
                await gate.pass()
                return 2
            }
        }
        try await Self.until { work.waiting("a") == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        gate.open()
        #expect(try await leader.value == 1)
        #expect(gate.runs == 1)
    }

    @Test func theNextCallerAfterARunEndedRunsAgain() async throws {
        let work = SharedWork<String, Int>()
        let runs = Mutex(0)
        for expected in 1...2 {
            let value = try await work.run(key: "a") {
                runs.withLock {
                    $0 += 1
                    return $0
                }
            }
            #expect(value == expected)
        }
    }
}
