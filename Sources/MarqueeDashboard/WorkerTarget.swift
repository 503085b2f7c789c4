import MarqueeKafka
import MarqueeObservability
import MarqueeOperations

/// A worker the dashboard shows: a member of its stage's consumer group, an address of `MARQUEE_WORKERS`, or both.
struct WorkerTarget: Sendable, Hashable {
    /// How a worker was found.
    enum Source: String, Sendable, Hashable {
        /// A member of the stage's consumer group.
        case group
        /// An address of `MARQUEE_WORKERS`.
        case configured = "MARQUEE_WORKERS"
    }

    var stage: String
    /// `host:port` of its `/readyz` and `/metrics`; `nil` for a member whose client id announces none.
    var address: String?
    /// The group members found at the address (usually one; none for an address of `MARQUEE_WORKERS` alone).
    var members: [KafkaConsumerGroupMember] = []
    /// Whether `MARQUEE_WORKERS` lists the address.
    var isConfigured = false

    /// The sources it was found by, the group first.
    var sources: [Source] { (self.members.isEmpty ? [] : [.group]) + (self.isConfigured ? [.configured] : []) }

    /// What its samples are kept under from one round to the next: the stage and the address, or the member.
    var key: String {
        if let address = self.address { return "\(self.stage)=\(address)" }
        return "\(self.stage)#\(self.members.first?.memberID ?? "")"
    }

    /// What names it on the page: its address, or its client id when it announces none.
    var label: String { self.address ?? self.members.first.map(Self.clientID(of:)) ?? "" }

    /// A member's client id: as the group description gives it, else the start of its member id.
    ///
    /// A coordinator names a member `<client id>-<UUID>` (Apache Kafka's rule, which the test broker follows too);
    /// the test broker describes members with an empty client id and host, so the member id is what tells.
    static func clientID(of member: KafkaConsumerGroupMember) -> String {
        if !member.clientID.isEmpty { return member.clientID }
        let id = member.memberID
        guard id.count > 37, let dash = id.index(id.endIndex, offsetBy: -37, limitedBy: id.startIndex), id[dash] == "-",
            Self.isUUID(id[id.index(after: dash)...])
        else { return "" }
        return String(id[..<dash])
    }

    /// `8-4-4-4-12` hexadecimal digits.
    private static func isUUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

extension WorkerTarget {
    /// The workers of each stage: the members of its consumer group at the address their client id announces
    /// (``AnnouncedAddress``), and the addresses `MARQUEE_WORKERS` lists that no member announced.
    ///
    /// A member announcing an unspecified host (`0.0.0.0`) is asked at the host the broker saw it connect from. A
    /// member that announces nothing is listed on its own, with no address. Members announcing the same address are
    /// one worker (one process answers there). A stage's configured addresses come first, in their order, then the
    /// other members by address, then those without one by client id.
    ///
    /// - Parameters:
    ///   - stages: The pipeline's stages, with their groups and configured addresses.
    ///   - groups: The descriptions of the stages' groups, by group id; a group missing from it has no members.
    static func targets(
        stages: [PipelineLayout.Stage],
        groups: [String: KafkaConsumerGroupDescription]
    ) -> [WorkerTarget] {
        var targets: [WorkerTarget] = []
        for stage in stages {
            var configured: [WorkerTarget] = []
            for address in stage.workers where !configured.contains(where: { Self.same($0.address, address) }) {
                configured.append(WorkerTarget(stage: stage.name, address: address, isConfigured: true))
            }
            var announced: [WorkerTarget] = []
            var silent: [WorkerTarget] = []
            for member in groups[stage.group]?.members ?? [] {
                let announcement = AnnouncedAddress(clientID: Self.clientID(of: member))
                guard let address = announcement?.resolved(memberHost: member.host) else {
                    silent.append(WorkerTarget(stage: stage.name, address: nil, members: [member]))
                    continue
                }
                let text = address.description
                if let index = configured.firstIndex(where: { Self.same($0.address, text) }) {
                    configured[index].members.append(member)
                } else if let index = announced.firstIndex(where: { Self.same($0.address, text) }) {
                    announced[index].members.append(member)
                } else {
                    announced.append(WorkerTarget(stage: stage.name, address: text, members: [member]))
                }
            }
            announced.sort { ($0.address ?? "") < ($1.address ?? "") }
            silent.sort { lhs, rhs in
                let (left, right) = (lhs.members[0], rhs.members[0])
                return (Self.clientID(of: left), left.memberID) < (Self.clientID(of: right), right.memberID)
            }
            targets += configured + announced + silent
        }
        return targets
    }

    /// Whether two `host:port` texts name the same address (host names compare without case).
    private static func same(_ lhs: String?, _ rhs: String) -> Bool {
        lhs?.lowercased() == rhs.lowercased()
    }
}
