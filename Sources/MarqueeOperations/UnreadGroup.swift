public import MarqueeKafka
import MarqueeSettings

/// A stage's consumer group that nobody consumes in while its topics wait: the operator tools read one group
/// and the workers run in another (a `MARQUEE_GROUP` given to the workers and not to the tools, or the other way
/// round). `marquee drain`, `marquee lag` and the dashboard say so in one line instead of showing lag that never
/// moves.
public struct UnreadGroup: Sendable, Hashable {
    /// The stage whose group is read.
    public var stage: String
    /// The group the tool reads, which has no member.
    public var group: String
    /// The stage's lag in that group.
    public var lag: Int64
    /// Groups with members that consume the stage's topics (assigned a partition of them, or committed on them).
    public var consumers: [String]
    /// Whether the crawl's lineage says every job finished (only `marquee drain --roots` knows).
    public var crawlFinished: Bool

    /// A notice of these facts.
    public init(stage: String, group: String, lag: Int64, consumers: [String], crawlFinished: Bool = false) {
        self.stage = stage
        self.group = group
        self.lag = lag
        self.consumers = consumers
        self.crawlFinished = crawlFinished
    }

    /// The variable that picks the group the operator tools read for a pipeline stage (`MARQUEE_GROUP_FETCH`),
    /// or `nil` for a group that is no stage's.
    public static func variable(of stage: String) -> String? {
        Catalogue.stageGroups.first { $0.stage == stage }?.setting.name
    }

    /// The notice in one line, led by the stage: the group read, the groups that consume instead, and the
    /// variable to set.
    public var line: String { "\(self.stage): \(self.sentence)" }

    /// The notice without the stage's name, as a lag status's reason.
    public var sentence: String {
        let why: String
        switch (self.consumers.isEmpty, self.crawlFinished) {
        case (false, _):
            let groups = self.consumers.prefix(3).joined(separator: ", ")
            let more = self.consumers.count > 3 ? " and \(self.consumers.count - 3) more" : ""
            let verb = self.consumers.count == 1 ? "consumes" : "consume"
            why = "while \(groups)\(more) \(verb) its topics"
        case (true, true):
            why = "although every job of the crawl finished"
        case (true, false):
            why = "and no other group consumes its topics"
        }
        var line = "group \(self.group) has no member and lag \(self.lag) \(why)"
        if let variable = Self.variable(of: self.stage) {
            let suggestion = self.consumers.first.map { " (\(variable)=\($0))" } ?? ""
            line += "; \(variable) picks the group read here\(suggestion)"
        }
        return line
    }

    /// The groups other than `group` that have members and consume one of `topics`: a member is assigned a
    /// partition of them, or, where the broker reports no assignment (the test broker), the group committed an
    /// offset on them.
    ///
    /// - Throws: A ``KafkaError`` when the broker does not answer.
    public static func consumers(
        of topics: [String],
        except group: String,
        admin: KafkaAdmin
    ) async throws(KafkaError) -> [String] {
        let wanted = Set(topics)
        let others = try await admin.listGroups().filter { !$0.isSimple && $0.group != group }.map(\.group)
        guard !others.isEmpty else { return [] }
        var consumers: [String] = []
        for (name, description) in try await admin.describeGroups(others).sorted(by: { $0.key < $1.key }) {
            guard !description.members.isEmpty else { continue }
            if description.members.contains(where: { $0.assignment.contains { wanted.contains($0.topic) } }) {
                consumers.append(name)
            } else if try await admin.committedOffsets(group: name).keys.contains(where: { wanted.contains($0.topic) })
            {
                consumers.append(name)
            }
        }
        return consumers
    }
}

/// The answers of ``UnreadGroup/consumers(of:except:admin:)`` per group read, kept for 15 seconds: a tool that
/// samples every second (`marquee drain`, `marquee lag --watch`, the dashboard) asks the broker about every other
/// group at most that often while a stage's group has no member and lag.
public struct OtherConsumersCache: Sendable {
    /// How long an answer stands.
    public static let lifetime: Int64 = 15_000
    private var answers: [String: (time: Int64, groups: [String])] = [:]

    /// An empty cache.
    public init() {}

    /// The groups other than `group` that consume `topics`, asked again once the last answer is older than
    /// ``lifetime`` (`now` in epoch ms). A broker that does not answer gives none: the caller's figures stand.
    public mutating func consumers(
        of topics: [String],
        except group: String,
        admin: KafkaAdmin,
        now: Int64
    ) async -> [String] {
        if let known = self.answers[group], now - known.time < Self.lifetime { return known.groups }
        let groups = (try? await UnreadGroup.consumers(of: topics, except: group, admin: admin)) ?? []
        self.answers[group] = (now, groups)
        return groups
    }

    /// Forgets the answer for `group`: it has members again, or no lag.
    public mutating func forget(_ group: String) { self.answers[group] = nil }
}
