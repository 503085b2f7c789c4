import Testing

@testable import MarqueeOperations

@Suite struct DeadLetterQueueSelectionTests {
    static func id(_ offset: Int64) -> DeadLetterID { DeadLetterID(stage: "fetch", partition: 0, offset: offset) }

    @Test func lettersNamedTwiceAreTakenOnceInTheOrderFirstNamed() {
        #expect(
            DeadLetterQueue.unique([Self.id(3), Self.id(1), Self.id(3), Self.id(2), Self.id(1)]) == [
                Self.id(3), Self.id(1), Self.id(2),
            ]
        )
    }

    @Test func idsThatNameNoLetterAreReportedInOrder() {
        let found = [Self.id(1): DeadLetterPurgeTests.letter(0, 1), Self.id(3): DeadLetterPurgeTests.letter(0, 3)]
        let selection = DeadLetterQueue.select([Self.id(3), Self.id(9), Self.id(1), Self.id(4)], from: found)
        #expect(selection.letters.map(\.id) == [Self.id(3), Self.id(1)])
        #expect(selection.missing == [Self.id(9), Self.id(4)])
    }
}
