import MarqueeKafka
import MarqueeOperations
import Testing

@testable import MarqueeDashboard

/// Which workers the dashboard asks: the groups' members at the addresses they announce, and `MARQUEE_WORKERS`.
@Suite struct WorkerTargetTests {
    /// The layout `marquee dashboard` works with: without `MARQUEE_WORKERS`, no configured address (not the
    /// layout's default of one worker per stage on this machine).
    func layout(workers: String?) throws -> PipelineLayout {
        var layout = try PipelineLayout(settings: ["MARQUEE_TOPIC_PREFIX": "p.", "MARQUEE_WORKERS": workers ?? ""])
        if workers == nil {
            for index in layout.stages.indices { layout.stages[index].workers = [] }
        }
        return layout
    }

    func member(_ id: String, _ clientID: String, host: String = "/10.0.0.9") -> KafkaConsumerGroupMember {
        KafkaConsumerGroupMember(memberID: id, clientID: clientID, host: host, assignment: [])
    }

    func group(_ name: String, _ members: [KafkaConsumerGroupMember]) -> [String: KafkaConsumerGroupDescription] {
        [name: KafkaConsumerGroupDescription(group: name, state: .stable, members: members)]
    }

    @Test func membersAreFoundAtTheAddressesTheyAnnounce() throws {
        let layout = try self.layout(workers: "records=127.0.0.1:1")
        let groups = self.group(
            "p.fetch",
            [
                self.member("m2", "marquee-fetch_10.0.0.6_9101"),
                self.member("m1", "marquee-fetch_10.0.0.5_9101"),
                self.member("m3", "marquee-fetch_fd00__3_9101"),
            ]
        )
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups)
        #expect(targets.map(\.stage) == ["fetch", "fetch", "fetch", "records"], "stages in the layout's order")
        #expect(targets.map(\.address) == ["10.0.0.5:9101", "10.0.0.6:9101", "[fd00::3]:9101", "127.0.0.1:1"])
        #expect(targets[0].members.map(\.memberID) == ["m1"])
        #expect(targets[0].sources == [.group])
        #expect(targets[3].sources == [.configured], "a configured address no member announces is still asked")
        #expect(targets[3].members.isEmpty)
    }

    @Test func aConfiguredAddressAMemberAnnouncesIsOneWorker() throws {
        let layout = try self.layout(workers: "fetch=marquee-fetch-0:9101,fetch=10.0.0.5:9101,fetch=10.0.0.5:9101")
        let groups = self.group(
            "p.fetch",
            [self.member("m1", "marquee-fetch_10.0.0.5_9101"), self.member("m2", "marquee-fetch_10.0.0.7_9101")]
        )
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups)
        #expect(targets.map(\.address) == ["marquee-fetch-0:9101", "10.0.0.5:9101", "10.0.0.7:9101"])
        #expect(targets[1].sources == [.group, .configured], "deduplicated, found both ways")
        #expect(targets[1].members.map(\.memberID) == ["m1"])
        #expect(targets[0].sources == [.configured])
        #expect(Set(targets.map(\.key)).count == targets.count)
    }

    @Test func hostNamesCompareWithoutCase() throws {
        let layout = try self.layout(workers: "fetch=Fetch-0.Example:9101")
        let groups = self.group("p.fetch", [self.member("m1", "marquee-fetch_fetch-0.example_9101")])
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups)
        #expect(targets.count == 1)
        #expect(targets[0].sources == [.group, .configured])
    }

    @Test func aMemberThatAnnouncesNothingIsListedWithoutAnAddress() throws {
        let layout = try self.layout(workers: nil)
        let groups = self.group(
            "p.images",
            [self.member("m9", "marquee-images", host: "/10.0.0.8"), self.member("m1", "marquee-images_10.0.0.5_9102")]
        )
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups).filter { $0.stage == "images" }
        #expect(targets.map(\.address) == ["10.0.0.5:9102", nil], "announced first, then the silent ones")
        #expect(targets[1].label == "marquee-images")
        #expect(targets[1].members.first?.host == "/10.0.0.8")
        #expect(targets[1].key == "images#m9")
    }

    @Test func aMemberIDTellsTheClientIDWhenTheDescriptionLeavesItOut() throws {
        let uuid = "73df28bc-94b1-4c4f-990b-2879827f757b"
        let described = self.member("marquee-records_127.0.0.1_39619-\(uuid)", "", host: "")
        #expect(WorkerTarget.clientID(of: described) == "marquee-records_127.0.0.1_39619")
        #expect(
            WorkerTarget.clientID(of: self.member("m-\(uuid)", "marquee-fetch")) == "marquee-fetch",
            "the description's own"
        )
        #expect(WorkerTarget.clientID(of: self.member("no-uuid-here", "")) == "")
        #expect(WorkerTarget.clientID(of: self.member("-\(uuid)", "")) == "")
        let layout = try self.layout(workers: nil)
        let targets = WorkerTarget.targets(stages: layout.stages, groups: self.group("p.records", [described]))
        #expect(targets.map(\.address) == ["127.0.0.1:39619"])
    }

    @Test func anUnspecifiedHostIsAskedWhereTheBrokerSawTheMember() throws {
        let layout = try self.layout(workers: nil)
        let groups = self.group(
            "p.records",
            [
                self.member("m1", "marquee-index_0.0.0.0_9103", host: "/172.18.0.4"),
                self.member("m2", "marquee-index_0.0.0.0_9103", host: "/172.18.0.5"),
                self.member("m3", "marquee-index_0.0.0.0_9103", host: ""),
            ]
        )
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups).filter { $0.stage == "records" }
        #expect(targets.map(\.address) == ["172.18.0.4:9103", "172.18.0.5:9103", nil], "replicas on one port, apart")
    }

    @Test func membersAnnouncingOneAddressAreOneWorker() throws {
        let layout = try self.layout(workers: nil)
        let groups = self.group(
            "p.fetch",
            [
                self.member("m1", "marquee-fetch_marquee-fetch_9101"),
                self.member("m2", "marquee-fetch_marquee-fetch_9101"),
            ]
        )
        let targets = WorkerTarget.targets(stages: layout.stages, groups: groups)
        #expect(targets.count == 1)
        #expect(targets[0].members.map(\.memberID) == ["m1", "m2"])
    }

    @Test func aNewMemberIsANewTargetAtTheNextDescription() throws {
        let layout = try self.layout(workers: nil)
        var members = [self.member("m1", "marquee-fetch_10.0.0.5_9101")]
        #expect(WorkerTarget.targets(stages: layout.stages, groups: self.group("p.fetch", members)).count == 1)
        members.append(self.member("m2", "marquee-fetch_10.0.0.6_9101"))
        let targets = WorkerTarget.targets(stages: layout.stages, groups: self.group("p.fetch", members))
        #expect(targets.map(\.address) == ["10.0.0.5:9101", "10.0.0.6:9101"])
        #expect(WorkerTarget.targets(stages: layout.stages, groups: [:]).isEmpty, "no group, no configured address")
    }
}
