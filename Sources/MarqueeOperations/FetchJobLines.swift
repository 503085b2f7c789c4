public import MarqueeCore

/// Fetch jobs read from JSON lines (`marquee enqueue --file`): each non-blank line decoded with the fetch stage's
/// own decoding, and every line it refuses recorded with its number and reason.
public struct FetchJobLines: Sendable {
    /// The jobs of the lines that decoded, in order.
    public private(set) var jobs: [FetchJob] = []
    /// `line 3: <reason>` for each line that did not decode, in order.
    public private(set) var problems: [String] = []

    /// The most problems ``report`` lists one by one.
    public static let reportLimit = 100

    /// Reads `bytes` line by line; blank lines (spaces, tabs, carriage returns) are skipped.
    public init(parsing bytes: [UInt8]) {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            guard let start = line.firstIndex(where: { !blank($0) }), let end = line.lastIndex(where: { !blank($0) })
            else { continue }
            do {
                self.jobs.append(try FetchJob.decode(line[start...end]))
            } catch {
                self.problems.append("line \(index + 1): \(error.description)")
            }
        }
    }

    /// The problems to report, one line each: the first ``reportLimit``, then how many more.
    public var report: [String] {
        var lines = Array(self.problems.prefix(Self.reportLimit))
        if self.problems.count > Self.reportLimit {
            lines.append("… and \(self.problems.count - Self.reportLimit) more bad lines")
        }
        return lines
    }

    /// Why nothing may be sent: some lines are bad, or there are no jobs at all; `nil` when every line is a job.
    public var refusal: String? {
        if !self.problems.isEmpty {
            return "\(self.problems.count) bad line\(self.problems.count == 1 ? "" : "s"): nothing was sent"
        }
        return self.jobs.isEmpty ? "no jobs in the input: nothing was sent" : nil
    }
}
