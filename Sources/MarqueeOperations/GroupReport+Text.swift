public import MarqueeKafka

// MARK: - GroupReport + text for people

extension GroupReport {
    /// What `marquee groups describe` prints, as kafka-consumer-groups does: the state, a table of members
    /// (MEMBER-ID, HOST, CLIENT-ID, #PARTITIONS, ASSIGNMENT), a table of partitions (TOPIC, PARTITION,
    /// CURRENT-OFFSET, LOG-END-OFFSET, LAG, CLIENT-ID, HOST) and the total lag; one sentence for a group the
    /// broker does not know.
    public var text: String {
        if self.isUnknown {
            return "Consumer group '\(self.group)' has no members and no committed offsets "
                + "(state \(self.state)): the broker does not know it, or it never committed."
        }
        let count = self.members.count
        var lines = ["Consumer group '\(self.group)': state \(self.state), \(count) member\(count == 1 ? "" : "s")"]
        if !self.members.isEmpty {
            var members = TextTable([
                .init(header: "MEMBER-ID", maxWidth: 80), .init(header: "HOST"), .init(header: "CLIENT-ID"),
                .init(header: "#PARTITIONS", alignment: .right), .init(header: "ASSIGNMENT", maxWidth: 100),
            ])
            for member in self.members {
                members.append([
                    member.memberID, Self.dash(member.host), Self.dash(member.clientID), "\(member.assignment.count)",
                    Self.assignment(member.assignment),
                ])
            }
            lines += ["", members.render()]
            if self.members.allSatisfy({ $0.assignment.isEmpty }) {
                lines.append("(The broker reported no partitions assigned to any member.)")
            }
        }
        if self.partitions.isEmpty {
            lines += ["", "No committed offsets and no assigned partitions."]
        } else {
            var partitions = TextTable([
                .init(header: "TOPIC", maxWidth: 80), .init(header: "PARTITION", alignment: .right),
                .init(header: "CURRENT-OFFSET", alignment: .right),
                .init(header: "LOG-END-OFFSET", alignment: .right),
                .init(header: "LAG", alignment: .right), .init(header: "CLIENT-ID"), .init(header: "HOST"),
            ])
            for partition in self.partitions {
                partitions.append([
                    partition.partition.topic, "\(partition.partition.partition)",
                    partition.committed.map(String.init) ?? "-", partition.end.map(String.init) ?? "-",
                    partition.lag.map(String.init) ?? "-", Self.dash(partition.owner?.clientID),
                    Self.dash(partition.owner?.host),
                ])
            }
            lines += ["", partitions.render(), "", "Total lag: \(self.totalLag)"]
            let below = self.partitions.filter(\.isEndBelowCommit)
            if !below.isEmpty {
                let listed = below.prefix(3).map { "\($0.partition)" }.joined(separator: ", ")
                let more = below.count > 3 ? " and \(below.count - 3) more" : ""
                lines.append(
                    "(Lag 0 where the end offset reads below the committed offset: \(listed)\(more). The broker's end "
                        + "offset is wrong there; the test broker answers so after batched produce.)"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The text, or `-` for none or empty.
    static func dash(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "-" }
        return text
    }

    /// `orders:0,1,2 audit:3`: partitions by topic, in order.
    static func assignment(_ partitions: [KafkaTopicPartition]) -> String {
        var byTopic: [(topic: String, partitions: [Int32])] = []
        for partition in partitions.sorted() {
            if byTopic.last?.topic == partition.topic {
                byTopic[byTopic.count - 1].partitions.append(partition.partition)
            } else {
                byTopic.append((partition.topic, [partition.partition]))
            }
        }
        return byTopic.map { "\($0.topic):" + $0.partitions.map(String.init).joined(separator: ",") }
            .joined(separator: " ")
    }
}

// MARK: - GroupReport + reading it from the cluster

extension GroupReport {
    /// The describe report of `group`: its description, committed offsets and the end offsets of its partitions.
    ///
    /// A group the broker does not know is reported as dead with no members; a topic deleted since the group
    /// committed on it is shown without end offsets.
    ///
    /// - Throws: A ``KafkaError`` when the broker refuses or does not answer.
    public static func read(_ group: String, admin: KafkaAdmin) async throws(KafkaError) -> GroupReport {
        let description =
            try await admin.describeGroups([group])[group]
            ?? KafkaConsumerGroupDescription(group: group, state: .dead, members: [])
        let committed = try await admin.committedOffsets(group: group)
        let partitions = GroupReport.partitions(of: description, committed: committed)
        var ends: [KafkaTopicPartition: Int64] = [:]
        for topic in Set(partitions.map(\.topic)).sorted() {
            do {
                let marks = try await admin.watermarks(partitions: partitions.filter { $0.topic == topic })
                for (partition, mark) in marks { ends[partition] = mark.end }
            } catch  where error.code == .admin {
                // A topic deleted since the group committed on it: shown without end offsets, not a failure.
                continue
            }
        }
        return GroupReport(description: description, committed: committed, endOffsets: ends)
    }
}

// MARK: - GroupListing + text for people

extension GroupListing {
    /// What `marquee groups list` prints: a row per group (GROUP, STATE, TYPE), or `no consumer groups`.
    public static func text(_ groups: [GroupListing]) -> String {
        guard !groups.isEmpty else { return "no consumer groups" }
        var table = TextTable([.init(header: "GROUP", maxWidth: 100), .init(header: "STATE"), .init(header: "TYPE")])
        for group in groups {
            table.append([group.group, group.state.rawValue, group.isSimple ? "simple" : "consumer"])
        }
        return table.render()
    }
}
