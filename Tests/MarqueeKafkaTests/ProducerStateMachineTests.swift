import Testing

@testable import MarqueeKafka

@Suite struct ProducerStateMachineTests {
    @Test func theFlushWaitsForTheLastActiveSender() {
        var machine = ProducerStateMachine()
        let admitted = [machine.beginEnqueue(), machine.beginEnqueue()]
        let close = machine.close()
        // No sender is admitted once closing; the second of the two active ones to finish starts the flush.
        let admittedWhileClosing = machine.beginEnqueue()
        let flushAfterFirst = machine.endEnqueue()
        let flushAfterSecond = machine.endEnqueue()
        let waiters = machine.flushFinished()
        #expect(admitted == [true, true])
        #expect(close.resume.isEmpty)
        #expect(!close.startFlush)
        #expect(!admittedWhileClosing)
        #expect(!flushAfterFirst)
        #expect(flushAfterSecond)
        #expect(waiters.isEmpty)
        #expect(machine.isClosed)
    }

    @Test func closingWithNoActiveSenderFlushesAtOnceAndOnlyOnce() {
        var machine = ProducerStateMachine()
        let flushes = [machine.close().startFlush, machine.close().startFlush]
        #expect(flushes == [true, false])
    }

    @Test func eventsDuringAPassRunItOnceMoreAndAtMostOnePassRuns() {
        var machine = ProducerStateMachine()
        let schedules = [machine.queueBecameReadable(), machine.queueBecameReadable(), machine.queueBecameReadable()]
        let runsAgain = [machine.passFinished(hasRoom: true).runAgain, machine.passFinished(hasRoom: true).runAgain]
        let schedulesAfterwards = machine.queueBecameReadable()
        #expect(schedules == [true, false, false])
        #expect(runsAgain == [true, false])
        #expect(schedulesAfterwards)
    }

    @Test func aWaiterForRoomIsResumedByAPassThatFindsRoom() async {
        var machine = ProducerStateMachine()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // The waiter schedules a pass: after the last report nothing else would.
            guard case .wait(schedulePass: true) = machine.waitForRoom(continuation) else {
                Issue.record("expected to wait and schedule a pass")
                return continuation.resume()
            }
            let resumedWithoutRoom = machine.passFinished(hasRoom: false).resume
            let schedulesAgain = machine.queueBecameReadable()
            #expect(resumedWithoutRoom.isEmpty)
            #expect(schedulesAgain)
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
