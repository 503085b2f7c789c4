public import MarqueeStore

/// What `marquee drain` prints once the pipeline drained, in three parts printed as their figures are read:
/// what the store holds, the dead letters by reason, and where the data is with commands to try.
public enum DrainSummary {
    /// `Drained after 1:42.`, a table of the store's non-empty tables, and with roots, how many of the crawl's
    /// jobs finished.
    ///
    /// - Parameters:
    ///   - elapsed: The time since `marquee drain` started.
    ///   - counts: What the store holds (`nil`: it could not be read).
    ///   - lineage: How far the crawl's jobs got (`nil`: no roots, or not read).
    public static func stored(elapsed: Duration, counts: StoreCounts?, lineage: LineageProgress?) -> String {
        var parts = ["\nDrained after \(TextFormat.elapsed(elapsed)).\n"]
        if let counts { parts.append(counts.storedTable) }
        if let lineage {
            parts.append(
                "\nJobs of this crawl: \(lineage.finished) finished, \(lineage.deadLettered) of them dead-lettered."
            )
        }
        return parts.joined(separator: "\n")
    }

    /// The dead letters counted by stage, payload kind, error kind and reason.
    public struct DeadLetterReasons: Sendable, Hashable {
        /// Letters counted.
        public private(set) var total = 0
        /// Letters per `stage  kind  error kind  reason` (the reason cut to 90 characters).
        public private(set) var counts: [String: Int] = [:]

        /// No letters yet.
        public init() {}

        /// Counts a letter.
        public mutating func add(_ letter: DeadLetter) {
            self.total += 1
            let reason = String((letter.error ?? "no reason recorded").prefix(90))
            self.counts["\(letter.id.stage)  \(letter.kind)  \(letter.errorKind)  \(reason)", default: 0] += 1
        }

        /// `No dead letters.`, or how many and the ten most common reasons, most first.
        public var text: String {
            guard self.total > 0 else { return "\nNo dead letters." }
            var table = TextTable([
                .init(header: "COUNT", alignment: .right),
                .init(header: "STAGE  KIND  ERROR KIND  REASON", maxWidth: 140),
            ])
            for (reason, count) in self.counts.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }).prefix(10) {
                table.append([String(count), reason])
            }
            return "\n\(TextFormat.count(self.total, "dead letter")) (marquee dlq list shows them; marquee dlq "
                + "replay sends them again):\n" + table.render()
        }
    }

    /// Where the catalogue and the images are, and commands to look at them (`--store` added unless the store is
    /// the default).
    ///
    /// - Parameters:
    ///   - store: Where the catalogue is.
    ///   - imageStore: Where the images are.
    ///   - topTitle: The first movie of the latest box office, for a search to try (`nil`: a well-known title).
    public static func whereToLook(store: StoreLocation, imageStore: String, topTitle: String?) -> String {
        let storeFlag = store.description == StoreLocation.defaultValue ? "" : " --store '\(store)'"
        let examples = [
            "marquee query counts\(storeFlag)", "marquee query box-office\(storeFlag)",
            "marquee query movies \(topTitle.map { "\"\($0)\"" } ?? "기생충")\(storeFlag)",
        ]
        return (["\nThe catalogue is in \(store); the images in \(imageStore).", "Try:"] + examples.map { "  \($0)" })
            .joined(separator: "\n")
    }
}
