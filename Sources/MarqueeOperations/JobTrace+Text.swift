import MarqueeCore

// MARK: - JobTrace + text for people

extension JobTrace {
    /// The tree as `marquee job` prints it: a line per job drawn like `tree` (`├──`, `└──`, `│`), with its kind,
    /// stage, status, attempts, first and last times (UTC) and dead letters, the job asked about marked `◀`; then
    /// what the lines do not show: jobs of the store not read, jobs too deep, a dead-letter topic not read.
    ///
    /// - Parameter errorWidth: The longest error text shown on a line (cut with `…`).
    public func text(errorWidth: Int = 60) -> String {
        var rows: [(prefix: String, job: Job)] = []
        var deeper = 0
        var drawn: Set<JobID> = []
        func draw(_ id: JobID, lead: String, branch: String, depth: Int) {
            guard let job = self.jobs[id], drawn.insert(id).inserted else { return }
            rows.append((lead + branch, job))
            let kids = (self.children[id] ?? []).filter { !drawn.contains($0) }
            guard depth < Self.maximumDepth else {
                deeper += self.descendants(of: id).count
                return
            }
            let below = lead + (branch == "├── " ? "│   " : branch.isEmpty ? "" : "    ")
            for (index, kid) in kids.enumerated() {
                draw(kid, lead: below, branch: index == kids.count - 1 ? "└── " : "├── ", depth: depth + 1)
            }
        }
        for top in self.tops { draw(top, lead: "", branch: "", depth: 0) }

        var lines: [String] = []
        if let job = self.requested {
            var heading = "job \(job.id): \(job.status)"
            if let kind = job.kind, let stage = job.stage { heading += " (\(kind), \(stage))" }
            if let letter = job.deadLetters.last { heading += ", dead letter \(letter.id)" }
            lines.append(heading)
        }
        if let root = self.rootID, root != self.requestedID {
            lines.append("root \(root)")
        }
        if !rows.isEmpty { lines.append("") }
        let cells = rows.map { row in
            [
                row.prefix + row.job.id.rawValue + (row.job.isRequested ? " ◀" : ""),
                row.job.kind ?? "-",
                row.job.stage ?? "-",
                row.job.status,
                row.job.attempts.map { "attempt \($0)" } ?? "-",
                Self.times(first: row.job.firstAt, last: row.job.lastAt),
                Self.note(row.job, errorWidth: errorWidth),
            ]
        }
        let widths = (0..<7).map { column in cells.map { $0[column].count }.max() ?? 0 }
        for row in cells {
            var line = ""
            for (column, cell) in row.enumerated() {
                if column > 0 { line += "  " }
                line +=
                    column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        if !rows.isEmpty { lines.append("") }
        lines += self.summaryLines(deeper: deeper)
        return lines.joined(separator: "\n")
    }

    /// The lines under the tree on one line, `; `-separated: what `marquee job` says on standard error when
    /// nothing was found.
    public var statusLine: String { self.summaryLines(deeper: 0).joined(separator: "; ") }

    /// The lines under the tree: counts by status, and what was not shown or not read.
    func summaryLines(deeper: Int) -> [String] {
        var lines: [String] = []
        if self.isFound {
            let counts = self.statusCounts
            let order = ["done", "retried", "dead-lettered", Job.pending]
            let parts = (order + counts.keys.filter { !order.contains($0) }.sorted()).compactMap { status in
                counts[status].map { "\($0) \(status)" }
            }
            lines.append("\(Self.count(self.jobs.count, "job")): \(parts.joined(separator: ", ")); times in UTC")
        } else {
            let searched = [
                self.storeFailure == nil ? "the store" : nil,
                self.deadLetterReading == .read ? "the dead-letter topics" : nil,
            ].compactMap { $0 }
            lines.append(
                searched.isEmpty
                    ? "job \(self.requestedID) could not be looked up"
                    : "no job \(self.requestedID) in \(searched.joined(separator: " or "))"
            )
        }
        if self.jobsNotRead > 0 {
            lines.append(
                "\(self.jobsNotRead) more \(self.jobsNotRead == 1 ? "job" : "jobs") under the root not shown: the tree "
                    + "has \(self.jobsInStore), over the limit (--limit); shown are the path from the root and the "
                    + "job's children"
            )
        }
        if self.deadLettersNotShown > 0 {
            lines.append("\(Self.count(self.deadLettersNotShown, "dead letter")) of jobs not shown under the root")
        }
        if deeper > 0 {
            lines.append("\(Self.count(deeper, "job")) deeper than \(Self.maximumDepth) levels not shown")
        }
        if let failure = self.storeFailure {
            lines.append("the store could not be read: \(failure)")
        }
        switch self.deadLetterReading {
        case .read: break
        case .skipped: lines.append("dead-letter topics not read (--no-dlq)")
        case .failed(let reason, _): lines.append("the dead-letter topics could not be read: \(reason)")
        }
        return lines
    }

    /// Every job under `id` in the tree (not `id` itself), each once.
    func descendants(of id: JobID) -> [JobID] {
        var found: [JobID] = []
        var seen: Set<JobID> = [id]
        var stack = self.children[id] ?? []
        while let next = stack.popLast() {
            guard seen.insert(next).inserted else { continue }
            found.append(next)
            stack += self.children[next] ?? []
        }
        return found
    }

    /// `2026-11-27 07:01:02 → 07:01:05` (the date again when the last time is on another day), one time when both
    /// are the same, `-` when none is known.
    static func times(first: Int64?, last: Int64?) -> String {
        guard let first else { return last.map(Self.format(milliseconds:)) ?? "-" }
        let start = Self.format(milliseconds: first)
        guard let last, last / 1000 != first / 1000 else { return start }
        let end = Self.format(milliseconds: last)
        return start + " → " + (end.prefix(10) == start.prefix(10) ? String(end.dropFirst(11)) : end)
    }

    /// The dead letters' ids, else the error of a failure, cut to `errorWidth`.
    static func note(_ job: Job, errorWidth: Int) -> String {
        var parts: [String] = []
        if !job.deadLetters.isEmpty {
            parts.append("dlq " + job.deadLetters.map(\.id.description).joined(separator: ", "))
        }
        if job.status != "done", let error = job.error {
            let kind = job.errorKind.map { "\($0): " } ?? ""
            let text = (kind + error).split(whereSeparator: \.isNewline).joined(separator: " ")
            parts.append(text.count > errorWidth ? String(text.prefix(max(1, errorWidth - 1))) + "…" : text)
        }
        return parts.joined(separator: "  ")
    }

    /// A time in UTC, to the second: `2026-11-27 07:01:02`.
    public static func format(milliseconds: Int64) -> String {
        let instant = UTCInstant(milliseconds: milliseconds)
        return "\(instant.date) \(instant.time)"
    }

    static func count(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
}
