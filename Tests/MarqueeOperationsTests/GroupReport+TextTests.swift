import MarqueeKafka
import MarqueeOperations
import Testing

@Suite struct GroupReportTextTests {
    typealias Fixture = GroupReportTests

    @Test func aGroupIsItsStateMembersAndPartitionsAsKafkaConsumerGroupsShowsThem() {
        let report = GroupReport(
            description: .init(group: "g", state: .stable, members: [Fixture.worker, Fixture.idle]),
            committed: [Fixture.p0: 7, Fixture.p2: 4, Fixture.gone: 3],
            endOffsets: [Fixture.p0: 10, Fixture.p1: 5, Fixture.p2: 4]
        )
        #expect(
            report.text == """
                Consumer group 'g': state Stable, 2 members

                MEMBER-ID  HOST       CLIENT-ID  #PARTITIONS  ASSIGNMENT
                worker-a   /10.0.0.6  fetch-2              0
                worker-b   /10.0.0.5  fetch-1              2  orders:0,1

                TOPIC    PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CLIENT-ID  HOST
                deleted          0               3               -    -  -          -
                orders           0               7              10    3  fetch-1    /10.0.0.5
                orders           1               -               5    -  fetch-1    /10.0.0.5
                orders           2               4               4    0  -          -

                Total lag: 3
                """
        )
    }

    @Test func aGroupWithoutAssignmentsOrOffsetsSaysSo() {
        let member = KafkaConsumerGroupMember(memberID: "m", clientID: "", host: "", assignment: [])
        let quiet = GroupReport(
            description: .init(group: "g", state: .completingRebalance, members: [member]),
            committed: [:],
            endOffsets: [:]
        )
        #expect(
            quiet.text == """
                Consumer group 'g': state CompletingRebalance, 1 member

                MEMBER-ID  HOST  CLIENT-ID  #PARTITIONS  ASSIGNMENT
                m          -     -                    0
                (The broker reported no partitions assigned to any member.)

                No committed offsets and no assigned partitions.
                """
        )
        let unknown = GroupReport(
            description: .init(group: "x", state: .dead, members: []),
            committed: [:],
            endOffsets: [:]
        )
        #expect(
            unknown.text
                == "Consumer group 'x' has no members and no committed offsets (state Dead): the broker does not know "
                + "it, or it never committed."
        )
    }

    @Test func groupsAreListedWithStateAndType() {
        #expect(GroupListing.text([]) == "no consumer groups")
        let groups = [
            GroupListing(group: "marquee.fetch", state: .stable, isSimple: false),
            GroupListing(group: "offsets-only", state: .empty, isSimple: true),
        ]
        #expect(
            GroupListing.text(groups) == """
                GROUP          STATE   TYPE
                marquee.fetch  Stable  consumer
                offsets-only   Empty   simple
                """
        )
    }

    @Test func aResetPlanIsARowPerPartitionWithClampedOffsetsMarked() throws {
        let plan = try OffsetResetPlanTests.plan(.shift(by: -25), [OffsetResetPlanTests.p0, OffsetResetPlanTests.p1])
        #expect(
            plan.table == """
                GROUP  TOPIC   PARTITION  CURRENT-OFFSET  NEW-OFFSET  CHANGE
                g      orders          0              30  10 (first)     -20
                g      orders          1               5   0 (first)      -5
                """
        )
    }
}
