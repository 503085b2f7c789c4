import MarqueeCore

// MARK: - DeadLetterFilter + operator options

extension DeadLetterFilter {
    /// The filter of `marquee dlq`'s options, as the operator wrote them (purged letters excluded; the caller
    /// decides).
    ///
    /// `stages`, `kinds` and `errorKinds` are the values of repeatable options, each possibly comma-separated;
    /// white space is ignored and empty values dropped.
    ///
    /// - Parameters:
    ///   - stages: `--stage` values: stages of `layout`.
    ///   - kinds: `--kind` values: payload kinds, not checked (an unknown kind simply matches nothing).
    ///   - errorKinds: `--error-kind` values: `transient`, `permanent`, `poison` or `unknown`.
    ///   - errorText: `--grep`: text the error must contain (empty: no filter).
    ///   - since: `--since`: a time ago or an ISO 8601 time (``time(_:nowMilliseconds:)``).
    ///   - until: `--until`: the same forms.
    ///   - layout: The pipeline's stages.
    ///   - nowMilliseconds: Now, in milliseconds since the epoch.
    /// - Throws: A ``OperationsError`` naming the option for an unknown stage or error kind, or a time it cannot
    ///   read.
    public init(
        stages: [String],
        kinds: [String],
        errorKinds: [String],
        errorText: String?,
        since: String?,
        until: String?,
        layout: PipelineLayout,
        nowMilliseconds: Int64
    ) throws(OperationsError) {
        self.init()
        self.stages = Self.values(stages)
        let stageNames = layout.stages.map(\.name)
        for stage in self.stages.sorted() where !stageNames.contains(stage) {
            throw OperationsError(
                .deadLetters,
                "--stage: no stage '\(stage)' (stages: \(stageNames.joined(separator: ", ")))"
            )
        }
        self.kinds = Self.values(kinds)
        self.errorKinds = Self.values(errorKinds)
        let known = Envelope.ErrorKind.allCases.map(\.rawValue) + [DeadLetter.unknownErrorKind]
        for errorKind in self.errorKinds.sorted() where !known.contains(errorKind) {
            throw OperationsError(
                .deadLetters,
                "--error-kind: '\(errorKind)' is not one of \(known.joined(separator: ", "))"
            )
        }
        self.errorText = errorText.flatMap { $0.isEmpty ? nil : $0 }
        self.since = try since.map { text throws(OperationsError) in
            try Self.time(text, nowMilliseconds: nowMilliseconds)
        }
        self.until = try until.map { text throws(OperationsError) in
            try Self.time(text, nowMilliseconds: nowMilliseconds)
        }
    }

    /// The values of a repeatable, comma-separated option: white space removed, empty values dropped.
    static func values(_ options: [String]) -> Set<String> {
        Set(
            options.flatMap { $0.split(separator: ",") }.map { String($0.filter { !$0.isWhitespace }) }.filter {
                !$0.isEmpty
            }
        )
    }
}
