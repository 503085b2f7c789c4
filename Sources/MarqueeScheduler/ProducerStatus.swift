/// What `/readyz` and the gauges report about a producer.
public struct ProducerStatus: Sendable, Hashable {
    /// The group answered (this process is the leader or stands by).
    public var hasJoined = false
    /// This process holds the state topic's partition and fires windows.
    public var isLeader = false
    /// As leader, it has read the state topic through its own probe.
    public var isStateLoaded = false

    public init() {}

    /// Why the process is not ready, or `nil` when it is (a leader with its state read, or a standby).
    public var notReadyReason: String? {
        if !self.hasJoined { return "joining the producer group" }
        if self.isLeader, !self.isStateLoaded { return "reading the window state" }
        return nil
    }
}
