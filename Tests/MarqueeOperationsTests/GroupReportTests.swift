import MarqueeKafka
import MarqueeOperations
import Testing

import class Foundation.JSONEncoder
import class Foundation.JSONSerialization
import class Foundation.NSNull

@Suite struct GroupReportTests {
    static let p0 = KafkaTopicPartition(topic: "orders", partition: 0)
    static let p1 = KafkaTopicPartition(topic: "orders", partition: 1)
    static let p2 = KafkaTopicPartition(topic: "orders", partition: 2)
    static let gone = KafkaTopicPartition(topic: "deleted", partition: 0)

    static let worker = KafkaConsumerGroupMember(
        memberID: "worker-b",
        clientID: "fetch-1",
        host: "/10.0.0.5",
        assignment: [p1, p0]
    )
    static let idle = KafkaConsumerGroupMember(
        memberID: "worker-a",
        clientID: "fetch-2",
        host: "/10.0.0.6",
        assignment: []
    )

    @Test func partitionsAreTheCommittedAndTheAssignedOnesWithLagAndOwner() {
        let report = GroupReport(
            description: .init(group: "g", state: .stable, members: [Self.worker, Self.idle]),
            committed: [Self.p0: 7, Self.p2: 4, Self.gone: 3],
            endOffsets: [Self.p0: 10, Self.p1: 5, Self.p2: 4]
        )
        #expect(report.group == "g" && report.state == .stable)
        #expect(report.members.map(\.memberID) == ["worker-a", "worker-b"])
        #expect(report.members[1].assignment == [Self.p0, Self.p1])
        #expect(report.partitions.map(\.partition) == [Self.gone, Self.p0, Self.p1, Self.p2])
        #expect(report.partitions.map(\.committed) == [3, 7, nil, 4])
        #expect(report.partitions.map(\.end) == [nil, 10, 5, 4])
        // Lag only where both offsets are known, as kafka-consumer-groups shows "-" otherwise.
        #expect(report.partitions.map(\.lag) == [nil, 3, nil, 0])
        #expect(report.partitions.map { $0.owner?.clientID } == [nil, "fetch-1", "fetch-1", nil])
        #expect(report.totalLag == 3)
        #expect(!report.isUnknown)
        #expect(
            GroupReport.partitions(of: .init(group: "g", state: .stable, members: [Self.worker]), committed: [:]) == [
                Self.p0, Self.p1,
            ]
        )
    }

    @Test func anEndOffsetBelowTheCommitCountsAsZeroAndTheTextSaysWhy() {
        let report = GroupReport(
            description: .init(group: "g", state: .empty, members: []),
            committed: [Self.p0: 12, Self.p1: 4],
            endOffsets: [Self.p0: 10, Self.p1: 7]
        )
        #expect(report.partitions.map(\.lag) == [0, 3])
        #expect(report.partitions.map(\.isEndBelowCommit) == [true, false])
        #expect(report.totalLag == 3, "the total is what waits, not pulled down by the low end")
        let notes = report.text.split(separator: "\n").filter { $0.contains("reads below the committed offset") }
        #expect(notes.count == 1, "\(report.text)")
        #expect(notes.first?.contains("\(Self.p0)") == true, "\(report.text)")
    }

    @Test func aGroupTheBrokerDoesNotKnowIsReportedAsSuch() {
        for state in [KafkaConsumerGroupState.dead, .empty] {
            let report = GroupReport(
                description: .init(group: "nobody", state: state, members: []),
                committed: [:],
                endOffsets: [:]
            )
            #expect(report.isUnknown)
            #expect(report.partitions.isEmpty && report.members.isEmpty && report.totalLag == 0)
        }
        let withOffsets = GroupReport(
            description: .init(group: "g", state: .empty, members: []),
            committed: [Self.p0: 1],
            endOffsets: [:]
        )
        #expect(!withOffsets.isUnknown)
    }

    @Test func listingsAreSortedAndUnique() {
        #expect(GroupListing.listings([]).isEmpty)
        let listings = GroupListing.listings([
            .init(group: "marquee-images", state: .stable, isSimple: false),
            .init(group: "marquee-dlq-reader", state: .empty, isSimple: true),
            .init(group: "marquee-images", state: .stable, isSimple: false),
        ])
        #expect(listings.map(\.group) == ["marquee-dlq-reader", "marquee-images"])
        #expect(listings.map(\.state) == [.empty, .stable])
        #expect(listings.map(\.isSimple) == [true, false])
    }

    @Test func theJSONFormHasMembersAndPartitions() throws {
        let report = GroupReport(
            description: .init(group: "g", state: .stable, members: [Self.worker]),
            committed: [Self.p0: 7],
            endOffsets: [Self.p0: 10, Self.p1: 5]
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any]
        )
        #expect(object["group"] as? String == "g")
        #expect(object["state"] as? String == "Stable")
        #expect(object["total_lag"] as? Int == 3)
        let members = try #require(object["members"] as? [[String: Any]])
        #expect(members.first?["client_id"] as? String == "fetch-1")
        #expect(members.first?["member_id"] as? String == "worker-b")
        #expect(members.first?["host"] as? String == "/10.0.0.5")
        let assignment = try #require(members.first?["assignment"] as? [[String: Any]])
        #expect(assignment.map { $0["partition"] as? Int } == [0, 1])
        let partitions = try #require(object["partitions"] as? [[String: Any]])
        #expect(partitions.count == 2)
        #expect(partitions[0]["committed_offset"] as? Int == 7)
        #expect(partitions[0]["end_offset"] as? Int == 10)
        #expect(partitions[0]["lag"] as? Int == 3)
        #expect(partitions[0]["client_id"] as? String == "fetch-1")
        #expect(partitions[1]["committed_offset"] is NSNull)
        #expect(partitions[1]["lag"] is NSNull)
    }
}
