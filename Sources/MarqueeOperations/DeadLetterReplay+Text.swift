public import MarqueeKafka

// MARK: - DeadLetterReplay + what `marquee dlq replay` says

extension DeadLetterReplay {
    /// The letters a replay sends, and the poison letters it refuses unless `includingPoison` (they failed to
    /// parse; replayed as they are, they would fail again).
    public static func selecting(
        _ letters: [DeadLetter],
        includingPoison: Bool
    ) -> (replayed: [DeadLetter], refused: [DeadLetter]) {
        includingPoison ? (letters, []) : (letters.filter { !$0.isPoison }, letters.filter(\.isPoison))
    }

    /// `2 poison letters not replayed (--include-poison replays them after a fix): fetch/0/1, fetch/0/2`.
    public static func refusal(_ refused: [DeadLetter]) -> String {
        "\(TextFormat.count(refused.count, "poison letter")) not replayed (--include-poison replays them after a "
            + "fix): " + DeadLetterID.firstFive(refused.map(\.id))
    }

    /// What `--dry-run` prints: how many letters would be replayed to which topics, then a sample of five.
    public static func dryRun(_ letters: [DeadLetter], layout: PipelineLayout) -> String {
        var lines = [
            "\(TextFormat.count(letters.count, "dead letter")) would be replayed (dry run)"
                + "\(Self.byTopic(letters, layout: layout))."
        ]
        if !letters.isEmpty {
            lines.append(letters.count > 5 ? "The first 5:" : "They are:")
            lines.append(Self.sample(letters.prefix(5), layout: layout))
        }
        return lines.joined(separator: "\n")
    }

    /// A table of letters and where each would go: ID, TO, KIND, ERROR KIND, KEY.
    static func sample(_ letters: ArraySlice<DeadLetter>, layout: PipelineLayout) -> String {
        var table = TextTable([
            .init(header: "ID", maxWidth: 60), .init(header: "TO", maxWidth: 60),
            .init(header: "KIND", maxWidth: 30),
            .init(header: "ERROR KIND"), .init(header: "KEY", maxWidth: 50),
        ])
        for letter in letters {
            table.append([
                letter.id.description, Self.message(replaying: letter, layout: layout).topic, letter.kind,
                letter.errorKind, letter.readableKey,
            ])
        }
        return table.render()
    }

    /// `fetch/2/17 -> marquee.fetch/3/120  tmdb.movie  movie:550:ko-KR`: a letter and where its replay was stored.
    public static func line(_ letter: DeadLetter, sentTo report: KafkaDeliveryReport) -> String {
        "\(letter.id) -> \(report.topic)/\(report.partition)/\(report.offset)  \(letter.kind)  \(letter.readableKey)"
    }

    /// `2 of 3 dead letters replayed to marquee.fetch (2)`.
    public static func summary(sent: [DeadLetter], of count: Int, layout: PipelineLayout) -> String {
        "\(sent.count) of \(TextFormat.count(count, "dead letter")) replayed\(Self.byTopic(sent, layout: layout))"
    }

    /// ` to marquee.fetch (3), marquee.images (1)`, or nothing for no letters.
    static func byTopic(_ letters: [DeadLetter], layout: PipelineLayout) -> String {
        var counts: [String: Int] = [:]
        for letter in letters {
            counts[Self.message(replaying: letter, layout: layout).topic, default: 0] += 1
        }
        guard !counts.isEmpty else { return "" }
        return " to " + counts.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
    }
}
