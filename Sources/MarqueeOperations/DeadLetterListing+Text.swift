// MARK: - DeadLetterListing + text for people

extension DeadLetterListing {
    /// What `marquee dlq list` prints: the table of ``letters`` (when there are any), a blank line, and the
    /// ``summary(includesPurged:)``.
    ///
    /// - Parameters:
    ///   - nowMilliseconds: Now, for the letters' ages.
    ///   - includesPurged: Whether purged letters were asked for (`--all`): they get a PURGED column, and the
    ///     summary does not mention them as left out.
    public func text(nowMilliseconds: Int64, includesPurged: Bool) -> String {
        let letters = self.letters
        let summary = self.summary(shown: letters.count, includesPurged: includesPurged)
        guard !letters.isEmpty else { return summary }
        return Self.table(letters, nowMilliseconds: nowMilliseconds, markingPurged: includesPurged) + "\n\n" + summary
    }

    /// `3 dead letters:` (or how many of them are shown), a line per stage and error kind, and how many purged
    /// letters were left out (unless `includesPurged`).
    public func summary(includesPurged: Bool) -> String {
        self.summary(shown: self.letters.count, includesPurged: includesPurged)
    }

    /// A row per letter: ID, KIND, ERROR KIND, ATTEMPTS, AGE and the error, cut to fit; with `markingPurged`, a
    /// PURGED column after the id.
    static func table(_ letters: [DeadLetter], nowMilliseconds: Int64, markingPurged: Bool) -> String {
        var columns: [TextTable.Column] = [
            .init(header: "ID", maxWidth: 60), .init(header: "KIND", maxWidth: 30),
            .init(header: "ERROR KIND", maxWidth: 12),
            .init(header: "ATTEMPTS", alignment: .right), .init(header: "AGE", alignment: .right),
            .init(header: "ERROR", maxWidth: 70),
        ]
        if markingPurged { columns.insert(.init(header: "PURGED"), at: 1) }
        var table = TextTable(columns)
        for letter in letters {
            var row = [
                letter.id.description, letter.kind, letter.errorKind, letter.attempt.map { String($0) } ?? "-",
                letter.age(nowMilliseconds: nowMilliseconds).map(TextFormat.age(milliseconds:)) ?? "-",
                letter.error ?? "-",
            ]
            if markingPurged { row.insert(letter.isPurged ? "yes" : "", at: 1) }
            table.append(row)
        }
        return table.render()
    }

    private func summary(shown: Int, includesPurged: Bool) -> String {
        var lines: [String] = []
        let noun = self.matched == 1 ? "dead letter" : "dead letters"
        if self.matched == 0 {
            lines.append("no dead letters")
        } else if shown < self.matched {
            lines.append("\(self.matched) \(noun), the newest \(shown) shown (--limit):")
        } else {
            lines.append("\(self.matched) \(noun):")
        }
        var table = TextTable([.init(header: ""), .init(header: ""), .init(header: "", alignment: .right)])
        for (group, count) in self.counts.sorted(by: { $0.key < $1.key }) {
            table.append([group.stage, group.errorKind, String(count)])
        }
        if !self.counts.isEmpty {
            lines += table.render(showingHeader: false).split(separator: "\n").map { "  " + $0 }
        }
        if !includesPurged, self.purged > 0 {
            lines.append("\(self.purged) purged not shown (--all shows them)")
        }
        return lines.joined(separator: "\n")
    }
}
