/// What `marquee enqueue` writes on standard error while it sends a large input (5,000 jobs or more): a bar
/// redrawn in place on a terminal, else a line at every tenth.
public struct EnqueueProgress: Sendable {
    /// The jobs to send.
    public let total: Int
    /// Whether standard error is a terminal.
    public let isTerminal: Bool
    /// The last tenth reported as a line.
    private var lastTenth = 0

    /// Inputs smaller than this show no progress.
    public static let threshold = 5000

    /// Progress of sending `total` jobs.
    public init(total: Int, isTerminal: Bool) {
        self.total = total
        self.isTerminal = isTerminal
    }

    /// What to write once `done` jobs were sent (exactly: the bar has no line break), or `nil` for nothing.
    public mutating func update(_ done: Int) -> String? {
        guard self.total >= Self.threshold else { return nil }
        if self.isTerminal {
            let width = 30
            let filled = width * done / self.total
            return "\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: width - filled))] "
                + "\(done)/\(self.total)"
        }
        guard done * 10 / self.total > self.lastTenth else { return nil }
        self.lastTenth = done * 10 / self.total
        return "sent \(done)/\(self.total)\n"
    }

    /// What to write when sending ended: the line break after the bar, or `nil` for nothing.
    public var finish: String? { self.isTerminal && self.total >= Self.threshold ? "\n" : nil }
}
