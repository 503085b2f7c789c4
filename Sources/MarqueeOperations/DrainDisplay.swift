/// The frames of `marquee drain`'s progress: on a terminal, each sample redraws the lines in place; otherwise a
/// plain line at most every 5 seconds.
public struct DrainDisplay: Sendable {
    /// Whether standard output is a terminal.
    public let isTerminal: Bool
    /// Lines drawn last on the terminal (0: the next frame starts afresh).
    private var drawn = 0
    /// When the last plain line was written.
    private var lastPlain: ContinuousClock.Instant?

    /// A display for a terminal, or for a file or pipe.
    public init(isTerminal: Bool) { self.isTerminal = isTerminal }

    /// What to write for `sample` (exactly, ending in a line break), or `nil` when a plain line was written less
    /// than 5 seconds before `now`.
    ///
    /// On a terminal: up to the first line drawn last time, then each line cleared and rewritten. Otherwise the
    /// lines joined with ` | `, runs of spaces made one.
    public mutating func frame(
        _ sample: DrainSample,
        elapsed: Duration,
        now: ContinuousClock.Instant = .now
    ) -> String? {
        let lines = sample.lines(elapsed: elapsed)
        if self.isTerminal {
            var output = self.drawn > 0 ? "\u{1B}[\(self.drawn)F" : ""
            for line in lines { output += "\u{1B}[2K" + line + "\n" }
            self.drawn = lines.count
            return output
        }
        guard self.lastPlain.map({ now - $0 >= .seconds(5) }) ?? true else { return nil }
        self.lastPlain = now
        return lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            .joined(separator: " | ") + "\n"
    }

    /// Ends the redrawing: whatever is written next goes below the last frame.
    public mutating func finish() {
        if self.isTerminal { self.drawn = 0 }
    }
}
