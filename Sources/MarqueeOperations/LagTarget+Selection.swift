// MARK: - LagTarget + the stages and groups an operator names

extension LagTarget {
    /// The stages of `layout` that `stages` names (every stage when `nil`), each with its group: the one
    /// `groups` gives it, else the layout's.
    ///
    /// - Parameters:
    ///   - stages: `--stage`: stage names, comma-separated (white space ignored).
    ///   - groups: `--group` values: `stage=group`, or a bare group name when one stage is shown.
    ///   - layout: The pipeline's stages and their groups.
    /// - Throws: A ``OperationsError`` naming the option: an unknown stage, no stage at all, a group for a stage not
    ///   shown, an empty group name, or a bare group name with several stages shown.
    public static func selecting(
        stages: String?,
        groups: [String],
        layout: PipelineLayout
    ) throws(OperationsError) -> [LagTarget] {
        var shown = layout.stages
        if let names = stages {
            let wanted = names.split(separator: ",")
                .map { String($0.filter { !$0.isWhitespace }) }
                .filter { !$0.isEmpty }
            for name in wanted where layout.stage(name) == nil {
                throw OperationsError(
                    .layout,
                    "--stage: no stage '\(name)' (stages: \(PipelineLayout.stageNames.joined(separator: ", ")))"
                )
            }
            guard !wanted.isEmpty else { throw OperationsError(.layout, "--stage: name at least one stage") }
            shown = shown.filter { wanted.contains($0.name) }
        }
        var chosen: [String: String] = [:]
        for value in groups {
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 {
                guard shown.contains(where: { $0.name == parts[0] }) else {
                    throw OperationsError(.layout, "--group \(value): stage '\(parts[0])' is not shown (see --stage)")
                }
                guard !parts[1].isEmpty else {
                    throw OperationsError(.layout, "--group \(value): the group name is empty")
                }
                chosen[parts[0]] = parts[1]
            } else {
                guard shown.count == 1, !value.isEmpty else {
                    throw OperationsError(.layout, "--group \(value): give stage=group, or show one stage (--stage)")
                }
                chosen[shown[0].name] = value
            }
        }
        return shown.map { LagTarget(stage: $0, group: chosen[$0.name]) }
    }
}
