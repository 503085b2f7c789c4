/// The latest observations of each stage's consumer group: the sliding window the status rules judge, and the
/// lag history a display draws.
///
/// Appending beyond ``capacity`` drops the oldest observation of that stage. A stage that was observed
/// under another group before (the group was changed) starts a new history.
public struct LagWindow: Sendable, Hashable {
    /// Observations kept per stage.
    public let capacity: Int
    private var history: [String: [GroupObservation]] = [:]
    private var order: [String] = []

    /// - Parameter capacity: Observations kept per stage; at least 1.
    public init(capacity: Int) {
        precondition(capacity >= 1, "a lag window holds at least one observation, not \(capacity)")
        self.capacity = capacity
    }

    /// Adds the observations of one sampling round.
    public mutating func append(_ observations: [GroupObservation]) {
        for observation in observations {
            if !self.order.contains(observation.stage) { self.order.append(observation.stage) }
            var kept = self.history[observation.stage] ?? []
            if let last = kept.last, last.group != observation.group { kept.removeAll() }
            kept.append(observation)
            if kept.count > self.capacity { kept.removeFirst(kept.count - self.capacity) }
            self.history[observation.stage] = kept
        }
    }

    /// Observations kept of the stage observed most (at most ``capacity``).
    public var observationCount: Int { self.history.values.map(\.count).max() ?? 0 }

    /// The stages observed, in the order they were first appended.
    public var stages: [String] { self.order }

    /// The kept observations of a stage, oldest first.
    public func observations(of stage: String) -> [GroupObservation] {
        self.history[stage] ?? []
    }

    /// The status of every stage over its window (``LagEvaluation/evaluate(_:)``).
    public func evaluate() -> [GroupLag] {
        self.order.compactMap { stage in
            let observations = self.observations(of: stage)
            return observations.isEmpty ? nil : LagEvaluation.evaluate(observations)
        }
    }
}
