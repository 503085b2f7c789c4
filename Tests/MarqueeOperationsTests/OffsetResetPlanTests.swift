import MarqueeKafka
import MarqueeOperations
import Testing

import class Foundation.JSONEncoder
import class Foundation.JSONSerialization
import class Foundation.NSNull

@Suite struct OffsetResetPlanTests {
    static let p0 = KafkaTopicPartition(topic: "orders", partition: 0)
    static let p1 = KafkaTopicPartition(topic: "orders", partition: 1)
    static let p2 = KafkaTopicPartition(topic: "orders", partition: 2)
    static let audit = KafkaTopicPartition(topic: "audit", partition: 0)

    /// p0 holds 10..<50 (committed 30), p1 holds 0..<20 (committed 5), p2 holds 100..<100 (empty, nothing committed).
    static let watermarks: [KafkaTopicPartition: KafkaWatermarks] = [
        p0: .init(start: 10, end: 50), p1: .init(start: 0, end: 20), p2: .init(start: 100, end: 100),
    ]
    static let committed: [KafkaTopicPartition: Int64] = [p0: 30, p1: 5]

    static func plan(
        _ mode: OffsetResetMode,
        _ partitions: [KafkaTopicPartition] = [p0, p1],
        offsetsForTime: [KafkaTopicPartition: Int64?] = [:]
    ) throws -> OffsetResetPlan {
        try OffsetResetPlan(
            group: "g",
            mode: mode,
            partitions: partitions,
            committed: Self.committed,
            watermarks: Self.watermarks,
            offsetsForTime: offsetsForTime
        )
    }

    static func news(_ plan: OffsetResetPlan) -> [Int64] { plan.rows.map(\.new) }

    // MARK: Modes

    @Test func earliestIsEachPartitionsFirstRetainedOffset() throws {
        let plan = try Self.plan(.earliest, [Self.p1, Self.p0, Self.p2])
        #expect(plan.rows.map(\.partition) == [Self.p0, Self.p1, Self.p2])
        #expect(Self.news(plan) == [10, 0, 100])
        #expect(plan.rows.map(\.change) == [-20, -5, nil])
        #expect(plan.rows.map(\.current) == [30, 5, nil])
        #expect(plan.offsets == [Self.p0: 10, Self.p1: 0, Self.p2: 100])
        #expect(plan.rows.allSatisfy { !$0.isClamped })
    }

    @Test func latestIsEachPartitionsEndOffset() throws {
        let plan = try Self.plan(.latest)
        #expect(Self.news(plan) == [50, 20])
        #expect(plan.rows.map(\.change) == [20, 15])
    }

    @Test func toOffsetIsKeptWithinEachPartitionsRange() throws {
        let plan = try Self.plan(.offset(15))
        // 15 is inside p0's range only after its start: p0 (10..<50) takes it, p1 (0..<20) too.
        #expect(Self.news(plan) == [15, 15])
        let below = try Self.plan(.offset(3))
        #expect(Self.news(below) == [10, 3])
        #expect(below.rows[0].isClamped && below.rows[0].requested == 3)
        #expect(!below.rows[1].isClamped)
        let beyond = try Self.plan(.offset(1_000))
        #expect(Self.news(beyond) == [50, 20])
        #expect(beyond.rows.allSatisfy { $0.isClamped })
        // The end offset itself is a valid position (nothing left to read).
        #expect(Self.news(try Self.plan(.offset(50), [Self.p0])) == [50])
        #expect(Self.news(try Self.plan(.offset(-7))) == [10, 0])
    }

    @Test func shiftByMovesTheCommittedOffsetWithinTheRange() throws {
        #expect(Self.news(try Self.plan(.shift(by: -5))) == [25, 0])
        #expect(try Self.plan(.shift(by: -5)).rows.map(\.change) == [-5, -5])
        #expect(Self.news(try Self.plan(.shift(by: 12))) == [42, 17])
        let far = try Self.plan(.shift(by: -25))
        #expect(Self.news(far) == [10, 0])
        #expect(far.rows.map(\.requested) == [5, -20])
        #expect(Self.news(try Self.plan(.shift(by: 100))) == [50, 20])
        #expect(Self.news(try Self.plan(.shift(by: 0))) == [30, 5])
        // No overflow at the extremes.
        #expect(Self.news(try Self.plan(.shift(by: .max))) == [50, 20])
        #expect(Self.news(try Self.plan(.shift(by: .min))) == [10, 0])
    }

    @Test func shiftByRefusesAPartitionWithoutACommittedOffset() {
        let error = #expect(throws: OperationsError.self) { try Self.plan(.shift(by: 1), [Self.p0, Self.p2]) }
        #expect(error?.reason.contains("orders[2]") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("--to-earliest") == true)
    }

    @Test func toDatetimeTakesTheBrokersOffsetOrTheEndWhereNoMessageIsThatRecent() throws {
        let plan = try Self.plan(
            .dateTime(milliseconds: 1_795_000_000_000),
            [Self.p0, Self.p1, Self.p2],
            offsetsForTime: [Self.p0: 12, Self.p1: nil, Self.p2: nil]
        )
        #expect(Self.news(plan) == [12, 20, 100])
        // An answer outside the range (a broker's mistake, or retention since) is kept within it.
        let outside = try Self.plan(.dateTime(milliseconds: 0), [Self.p0], offsetsForTime: [Self.p0: 2])
        #expect(Self.news(outside) == [10])
        // A partition the broker gave no answer for is an error, not a silent end offset.
        #expect(throws: OperationsError.self) {
            try Self.plan(.dateTime(milliseconds: 0), [Self.p0, Self.p1], offsetsForTime: [Self.p0: 12])
        }
    }

    @Test func aPartitionWithoutWatermarksIsAnError() {
        #expect(throws: OperationsError.self) { try Self.plan(.earliest, [Self.audit]) }
    }

    // MARK: Choosing the mode

    @Test func exactlyOneModeIsRequired() throws {
        #expect(
            try OffsetResetMode.choosing(earliest: true, latest: false, dateTime: nil, offset: nil, shiftBy: nil)
                == .earliest
        )
        #expect(
            try OffsetResetMode.choosing(earliest: false, latest: true, dateTime: nil, offset: nil, shiftBy: nil)
                == .latest
        )
        #expect(
            try OffsetResetMode.choosing(earliest: false, latest: false, dateTime: nil, offset: 7, shiftBy: nil)
                == .offset(7)
        )
        #expect(
            try OffsetResetMode.choosing(earliest: false, latest: false, dateTime: nil, offset: nil, shiftBy: -3)
                == .shift(by: -3)
        )
        #expect(
            try OffsetResetMode.choosing(
                earliest: false,
                latest: false,
                dateTime: "1970-01-01T00:00:01Z",
                offset: nil,
                shiftBy: nil
            ) == .dateTime(milliseconds: 1000)
        )
        let none = #expect(throws: OperationsError.self) {
            try OffsetResetMode.choosing(earliest: false, latest: false, dateTime: nil, offset: nil, shiftBy: nil)
        }
        #expect(none?.reason.hasPrefix("name how to reset") == true)
        let two = #expect(throws: OperationsError.self) {
            try OffsetResetMode.choosing(earliest: true, latest: false, dateTime: nil, offset: 4, shiftBy: nil)
        }
        #expect(two?.reason.contains("not --to-earliest and --to-offset") == true, "\(String(describing: two))")
    }

    @Test func datetimesAreISO8601WithTheirZone() throws {
        #expect(try OffsetResetMode.parseDateTime("2026-11-27T06:00:00Z") == 1_795_759_200_000)
        #expect(try OffsetResetMode.parseDateTime("2026-11-27T15:00:00+09:00") == 1_795_759_200_000)
        #expect(try OffsetResetMode.parseDateTime("2026-11-26T22:00:00-08:00") == 1_795_759_200_000)
        #expect(try OffsetResetMode.parseDateTime("2026-11-27T06:00:00.250Z") == 1_795_759_200_250)
        for bad in ["2026-11-27T06:00:00", "2026-11-27", "yesterday", "", "2026-13-01T00:00:00Z", "1795759200000"] {
            let error = #expect(throws: OperationsError.self, "\(bad)") { try OffsetResetMode.parseDateTime(bad) }
            #expect(error?.reason.contains("ISO 8601") == true)
        }
        #expect(
            OffsetResetMode.dateTime(milliseconds: 1_795_759_200_250).description
                == "--to-datetime 2026-11-27T06:00:00.250Z"
        )
    }

    // MARK: Which partitions

    @Test func topicSelectionsParseTopicsAndPartitionLists() throws {
        #expect(try TopicSelection(parsing: "orders") == TopicSelection(topic: "orders"))
        #expect(try TopicSelection(parsing: "orders:0,2,5").partitions == [0, 2, 5])
        #expect(try TopicSelection(parsing: "orders:5, 0,5").partitions == [0, 5])
        #expect(try TopicSelection(parsing: "marquee.fetch-retry_1:3").description == "marquee.fetch-retry_1:3")
        for bad in ["", ":1", "orders:", "orders:a", "orders:1,,2", "orders:-1", "or ders", "orders:1:2", "주문"] {
            #expect(throws: OperationsError.self, "\(bad)") { try TopicSelection(parsing: bad) }
        }
        #expect(throws: OperationsError.self) { try TopicSelection(parsing: String(repeating: "t", count: 250)) }
    }

    @Test func repeatedTopicsMerge() {
        let merged = TopicSelection.merged([
            .init(topic: "orders", partitions: [2]), .init(topic: "audit"), .init(topic: "orders", partitions: [0, 2]),
            .init(topic: "events", partitions: [1]), .init(topic: "events"),
        ])
        #expect(
            merged == [
                .init(topic: "audit"), .init(topic: "events"), .init(topic: "orders", partitions: [0, 2]),
            ]
        )
    }

    @Test func withoutTopicsTheGroupsCommittedPartitionsAreReset() throws {
        let topics: [String: [Int32]] = ["orders": [0, 1, 2], "audit": [0]]
        let partitions = try OffsetResetPlan.partitions(
            selecting: [],
            topics: topics,
            committed: Self.committed,
            group: "g"
        )
        #expect(partitions == [Self.p0, Self.p1])
        let error = #expect(throws: OperationsError.self) {
            try OffsetResetPlan.partitions(selecting: [], topics: topics, committed: [:], group: "g")
        }
        #expect(error?.reason.contains("group 'g' has committed no offsets") == true)
        #expect(error?.reason.contains("--topic") == true)
    }

    @Test func topicsSelectEveryPartitionOrTheOnesNamed() throws {
        let topics: [String: [Int32]] = ["orders": [2, 0, 1], "audit": [0]]
        let every = try OffsetResetPlan.partitions(
            selecting: [.init(topic: "orders")],
            topics: topics,
            committed: [:],
            group: "g"
        )
        #expect(every == [Self.p0, Self.p1, Self.p2])
        let some = try OffsetResetPlan.partitions(
            selecting: [try TopicSelection(parsing: "orders:0,2"), .init(topic: "audit")],
            topics: topics,
            committed: Self.committed,
            group: "g"
        )
        #expect(some == [Self.audit, Self.p0, Self.p2])
        let unknown = #expect(throws: OperationsError.self) {
            try OffsetResetPlan.partitions(
                selecting: [.init(topic: "nope")],
                topics: topics,
                committed: [:],
                group: "g"
            )
        }
        #expect(unknown?.reason == "--topic nope: the cluster has no such topic")
        let missing = #expect(throws: OperationsError.self) {
            try OffsetResetPlan.partitions(
                selecting: [.init(topic: "orders", partitions: [1, 7, 9])],
                topics: topics,
                committed: [:],
                group: "g"
            )
        }
        #expect(missing?.reason == "--topic orders:1,7,9: orders has 3 partitions (0,1,2), not 7,9")
    }

    @Test func aPlanForASubsetLeavesTheOtherPartitionsOut() throws {
        let partitions = try OffsetResetPlan.partitions(
            selecting: [try TopicSelection(parsing: "orders:1")],
            topics: ["orders": [0, 1, 2]],
            committed: Self.committed,
            group: "g"
        )
        let plan = try Self.plan(.earliest, partitions)
        #expect(plan.offsets == [Self.p1: 0])
    }

    // MARK: Refusal

    @Test func aGroupWithMembersOrRebalancingIsRefused() throws {
        let member = KafkaConsumerGroupMember(
            memberID: "m-1",
            clientID: "fetch-worker",
            host: "/10.0.0.5",
            assignment: []
        )
        let busy = OffsetResetPlan.refusal(.init(group: "g", state: .stable, members: [member]))
        #expect(
            busy
                == "group 'g' has 1 member (fetch-worker); stop its workers first: offsets are reset only while "
                + "a group has no members"
        )
        // Without a client id from the broker, the member id names the member.
        let anonymous = KafkaConsumerGroupMember(memberID: "fetch-worker-1f2e", clientID: "", host: "", assignment: [])
        let two = OffsetResetPlan.refusal(.init(group: "g", state: .stable, members: [member, anonymous]))
        #expect(
            two?.hasPrefix("group 'g' has 2 members (fetch-worker, fetch-worker-1f2e); ") == true,
            "\(String(describing: two))"
        )
        #expect(
            OffsetResetPlan.refusal(.init(group: "g", state: .preparingRebalance, members: []))?.contains(
                "is PreparingRebalance"
            ) == true
        )
        #expect(OffsetResetPlan.refusal(.init(group: "g", state: .empty, members: [])) == nil)
        #expect(OffsetResetPlan.refusal(.init(group: "g", state: .dead, members: [])) == nil)
    }

    // MARK: JSON

    @Test func theJSONFormHasEveryFieldOfEveryRow() throws {
        let plan = try Self.plan(.offset(3), [Self.p0, Self.p2])
        let data = try JSONEncoder().encode(plan)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["group"] as? String == "g")
        #expect(object["mode"] as? String == "--to-offset 3")
        let rows = try #require(object["partitions"] as? [[String: Any]])
        #expect(rows.count == 2)
        #expect(rows[0]["topic"] as? String == "orders")
        #expect(rows[0]["partition"] as? Int == 0)
        #expect(rows[0]["current_offset"] as? Int == 30)
        #expect(rows[0]["new_offset"] as? Int == 10)
        #expect(rows[0]["requested_offset"] as? Int == 3)
        #expect(rows[0]["change"] as? Int == -20)
        #expect(rows[0]["clamped"] as? Bool == true)
        #expect(rows[0]["start_offset"] as? Int == 10 && rows[0]["end_offset"] as? Int == 50)
        #expect(rows[1]["current_offset"] is NSNull)
        #expect(rows[1]["change"] is NSNull)
    }
}

extension OffsetResetPlanTests {
    @Test func fromGroupTakesTheOtherGroupsOffsetsWithinTheRange() throws {
        let topic = "t"
        let p0 = KafkaTopicPartition(topic: topic, partition: 0)
        let p1 = KafkaTopicPartition(topic: topic, partition: 1)
        let marks = [p0: KafkaWatermarks(start: 2, end: 10), p1: KafkaWatermarks(start: 0, end: 5)]
        let plan = try OffsetResetPlan(
            group: "marquee.fetch",
            mode: .fromGroup("marquee-fetch"),
            partitions: [p0, p1],
            committed: [p1: 1],
            watermarks: marks,
            sourceOffsets: [p0: 1, p1: 4]
        )
        #expect(plan.offsets == [p0: 2, p1: 4], "below the first retained offset becomes it, as in every mode")
        #expect(
            throws: OperationsError.self,
            performing: {
                try OffsetResetPlan(
                    group: "g",
                    mode: .fromGroup("old"),
                    partitions: [p0, p1],
                    committed: [:],
                    watermarks: marks,
                    sourceOffsets: [p0: 3]
                )
            }
        )
        #expect(
            try OffsetResetMode.choosing(
                earliest: false,
                latest: false,
                dateTime: nil,
                offset: nil,
                shiftBy: nil,
                fromGroup: "old"
            ) == .fromGroup("old")
        )
        #expect(throws: OperationsError.self) {
            try OffsetResetMode.choosing(
                earliest: true,
                latest: false,
                dateTime: nil,
                offset: nil,
                shiftBy: nil,
                fromGroup: "old"
            )
        }
    }
}
