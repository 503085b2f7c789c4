import Testing

@testable import MarqueeKafka

@Suite struct ProducerStateMachineTests {
    @Test func theFlushWaitsForTheLastActiveSender() {
        var machine = ProducerStateMachine()
        let result1 = machine.beginEnqueue()
        #expect(result1)
        let result2 = machine.beginEnqueue()
        #expect(result2)
        let close = machine.close()
        #expect(close.resume.isEmpty)
        #expect(!close.startFlush)
        // No sender is admitted once closing.
        let result3 = machine.beginEnqueue()
        #expect(!result3)
        let result4 = machine.endEnqueue()
        #expect(!result4)
        let result5 = machine.endEnqueue()
        #expect(result5)
        let result6 = machine.flushFinished().isEmpty
        #expect(result6)
        #expect(machine.isClosed)
    }

    @Test func closingWithNoActiveSenderFlushesAtOnceAndOnlyOnce() {
        var machine = ProducerStateMachine()
        let result7 = machine.close().startFlush
        #expect(result7)
        let result8 = machine.close().startFlush
        #expect(!result8)
    }

    @Test func eventsDuringAPassRunItOnceMoreAndAtMostOnePassRuns() {
        var machine = ProducerStateMachine()
        let result9 = machine.queueBecameReadable()
        #expect(result9)
        let result10 = machine.queueBecameReadable()
        #expect(!result10)
        let result11 = machine.queueBecameReadable()
        #expect(!result11)
        let result12 = machine.passFinished(hasRoom: true).runAgain
        #expect(result12)
        let result13 = machine.passFinished(hasRoom: true).runAgain
        #expect(!result13)
        let result14 = machine.queueBecameReadable()
        #expect(result14)
    }

    @Test func aWaiterForRoomIsResumedByAPassThatFindsRoom() async {
        var machine = ProducerStateMachine()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // The waiter schedules a pass: after the last report nothing else would.
            guard case .wait(schedulePass: true) = machine.waitForRoom(continuation) else {
                Issue.record("expected to wait and schedule a pass")
                return continuation.resume()
            }
            let result15 = machine.passFinished(hasRoom: false).resume.isEmpty
            #expect(result15)
            let result16 = machine.queueBecameReadable()
            #expect(result16)
            let (resume, runAgain) = machine.passFinished(hasRoom: true)
            #expect(!runAgain)
            #expect(resume.count == 1)
            for waiter in resume { waiter.resume() }
        }
    }

    @Test func closingResumesTheWaitersForRoom() async {
        var machine = ProducerStateMachine()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = machine.waitForRoom(continuation)
            let close = machine.close()
            #expect(close.resume.count == 1)
            #expect(close.startFlush)
            for waiter in close.resume { waiter.resume() }
        }
        // Later waiters do not wait.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard case .resume = machine.waitForRoom(continuation) else {
                Issue.record("a closing producer made a sender wait for room")
                return continuation.resume()
            }
            continuation.resume()
        }
    }
}
