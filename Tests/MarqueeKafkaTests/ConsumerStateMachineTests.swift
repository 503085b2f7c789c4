import Testing

@testable import MarqueeKafka

@Suite struct ConsumerStateMachineTests {
    private let partition = KafkaTopicPartition(topic: "jobs", partition: 0)

    /// A machine with `partition` assigned and `offsets` read into its buffer by the reader (which then let go).
    private func machine(reading offsets: [Int64]) -> ConsumerStateMachine {
        var machine = ConsumerStateMachine()
        let isCooperative = machine.assign([self.partition], reportedProtocol: "EAGER")
        #expect(!isCooperative)
        guard case .read = machine.next() else {
            Issue.record("the reader did not get access")
            return machine
        }
        var owners: [Unmanaged<ConsumerStateMachine.PartitionState>?] = []
        machine.register(runs: [(self.partition, offsets[...])], owners: &owners)
        let state = owners[0]!.takeUnretainedValue()
        var decoded = offsets.reversed().map { self.message(state, $0) }
        machine.deliver(&decoded, partitions: [state])
        guard case .released = machine.release() else {
            Issue.record("the reader kept access")
            return machine
        }
        return machine
    }

    private func message(_ state: ConsumerStateMachine.PartitionState, _ offset: Int64) -> KafkaConsumerMessage {
        KafkaConsumerMessage(partitionState: state, offset: offset, key: nil, value: [], headers: [], timestamp: nil)
    }

    @Test func messagesAreHandedOutInOffsetOrder() {
        var machine = self.machine(reading: [5, 6, 7])
        let firstOffset = machine.nextBuffered()?.offset
        #expect(firstOffset == 5)
        guard case .message(let message) = machine.next() else {
            Issue.record("expected a message")
            return
        }
        #expect(message.offset == 6)
        let lastOffset = machine.nextBuffered()?.offset
        #expect(lastOffset == 7)
    }

    @Test func callsAskedForWhileTheReaderReadsAreMadeByItInOrderBeforeItLetsGo() {
        var machine = self.machine(reading: [0, 1, 2])
        let first = machine.nextBuffered()!
        // The reader takes access for its next batch.
        while machine.nextBuffered() != nil {}
        guard case .read = machine.next() else {
            Issue.record("the reader did not get access")
            return
        }
        // Meanwhile the application hands a message back and resumes: both wait for the reader.
        let pauseCalls = machine.pause([self.partition], handingBack: first)
        let resumeCalls = machine.resume([self.partition])
        #expect(pauseCalls == nil)
        #expect(resumeCalls == nil)
        guard case .make(let calls) = machine.release() else {
            Issue.record("the pending calls were not handed over")
            return
        }
        guard calls.steps.count == 3, case .pause(let paused) = calls.steps[0], case .seek(let seeks) = calls.steps[1],
            case .resume(let resumed) = calls.steps[2]
        else {
            Issue.record("unexpected calls: \(calls.steps)")
            return
        }
        #expect(paused == [self.partition])
        #expect(seeks.map(\.1) == [0])
        #expect(resumed == [self.partition])
        guard case .released(let resume, let startClose) = machine.release() else {
            Issue.record("still holding access")
            return
        }
        #expect(resume.isEmpty)
        #expect(startClose == nil)
    }

    @Test func aCommitWaitsUntilTheHolderOfAccessStoredTheProcessedOffsets() async {
        var machine = self.machine(reading: [0, 1])
        let first = machine.nextBuffered()!
        let second = machine.nextBuffered()!
        guard case .read = machine.next() else {
            Issue.record("the reader did not get access")
            return
        }
        // The reader is not idle: marking leaves storing to it.
        let callsForFirst = machine.markProcessed(first)
        let callsForSecond = machine.markProcessed(second)
        #expect(callsForFirst == nil)
        #expect(callsForSecond == nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard case .waiting = machine.storeForCommit(continuation) else {
                Issue.record("the commit did not wait for the holder of access")
                return continuation.resume()
            }
            guard case .make(let calls) = machine.release(), calls.stores.count == 1 else {
                Issue.record("the holder was not asked to store")
                return
            }
            #expect(calls.stores[0].0 == self.partition)
            #expect(calls.stores[0].1 == 2)
            guard case .released(let resume, _) = machine.release(), resume.count == 1 else {
                Issue.record("the commit was not resumed")
                return
            }
            for waiter in resume { waiter.resume() }
        }
    }

    @Test func theCloseSequenceTakesAccessWhenItsHolderLetsGo() {
        var machine = self.machine(reading: [0])
        _ = machine.nextBuffered()
        guard case .read = machine.next() else {
            Issue.record("the reader did not get access")
            return
        }
        guard case .none = machine.beginClose().action else {
            Issue.record("the close started under the reader")
            return
        }
        guard case .released(_, let startClose) = machine.release(), startClose != nil else {
            Issue.record("the close sequence did not get access")
            return
        }
        guard case .end(nil) = machine.next() else {
            Issue.record("the messages did not end")
            return
        }
        // Nobody else gets access any more.
        let resumeCalls = machine.resume([self.partition])
        let waiters = machine.closed()
        #expect(resumeCalls == nil)
        #expect(waiters.isEmpty)
    }

    @Test func aRevocationStoresTheRevokedPartitionsOffsetsAndDropsTheirBufferedMessages() {
        var machine = self.machine(reading: [0, 1, 2])
        let first = machine.nextBuffered()!
        let markCalls = machine.markProcessed(first)
        #expect(markCalls == nil)
        let revoked = machine.revoke([self.partition], reportedProtocol: nil)
        #expect(!revoked.isCooperative)
        #expect(revoked.stores.map(\.1) == [1])
        let next = machine.nextBuffered()
        #expect(next == nil)
        #expect(!machine.owns(first))
        #expect(machine.assignment.isEmpty)
    }
}
