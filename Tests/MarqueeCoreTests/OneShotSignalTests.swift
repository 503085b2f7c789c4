import MarqueeCore
import Testing

// A waiter that does not return when it should would hang: the limit turns that into a failure.
@Suite(.timeLimit(.minutes(1))) struct OneShotSignalTests {
    @Test func firingResumesEveryWaiterEarlierAndLater() async {
        let signal = OneShotSignal()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { await signal.wait() } }
            for _ in 0..<4 { group.addTask { await signal.waitUnlessCancelled() } }
            signal.fire()
            await group.waitForAll()
        }
        #expect(signal.isFired)
        await signal.wait()
        await signal.waitUnlessCancelled()
    }

    @Test func aCancelledWaiterReturnsWhileTheSignalStaysPending() async {
        let signal = OneShotSignal()
        let waiting = OneShotSignal()
        let waiter = Task {
            waiting.fire()
            await signal.waitUnlessCancelled()
            return Task.isCancelled
        }
        await waiting.wait()
        waiter.cancel()
        #expect(await waiter.value)
        #expect(!signal.isFired)
        // The cancelled waiter left nothing behind: a later fire still resumes the others.
        async let other: Void = signal.wait()
        signal.fire()
        await other
    }

    @Test func aWaiterCancelledBeforeItWaitsDoesNotSuspend() async {
        let signal = OneShotSignal()
        await withTaskGroup(of: Void.self) { group in
            group.cancelAll()
            group.addTask { await signal.waitUnlessCancelled() }
            await group.waitForAll()
        }
        #expect(!signal.isFired)
    }
}
