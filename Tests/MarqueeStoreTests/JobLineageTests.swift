import MarqueeCore
import Testing

@testable import MarqueeStore

@Suite("Job lineage")
struct JobLineageTests {
    /// The `job.outcome` record of `envelope`.
    private func outcome(
        _ envelope: Envelope,
        _ outcome: JobOutcome.Outcome = .done,
        kind: String = "tmdb.movie",
        spawned: [Envelope] = [],
        at time: Int64
    ) -> Record {
        JobOutcome(
            envelope: envelope,
            stage: "fetch",
            kind: kind,
            outcome: outcome,
            outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count],
            spawned: spawned.map(\.id),
            source: "marquee.fetch/1/\(time)",
            finishedAt: time
        ).record
    }

    @Test(
        "any job of a tree finds its root and the whole tree, each row as it was reported",
        arguments: TestEngine.enabled
    )
    func wholeTree(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = Envelope.root()
            let (a, b) = (root.child(), root.child())
            let grandchild = a.child()
            let other = Envelope.root()
            _ = try await store.write([
                outcome(root, kind: "tmdb.list", spawned: [a, b], at: 1_000),
                outcome(a, spawned: [grandchild], at: 3_000),
                outcome(b, .deadLettered(.permanent, error: "HTTP 404"), at: 2_000),
                outcome(grandchild, .retried(tier: 2, error: "HTTP 503"), at: 4_000),
                outcome(other, at: 500),
            ])
            for asked in [root, a, grandchild] {
                let lineage = try await store.jobLineage(of: asked.id)
                #expect(lineage.rootID == root.id && lineage.total == 4 && lineage.isWhole)
                #expect(lineage.outcomes.map(\.jobID) == [root.id, b.id, a.id, grandchild.id], "oldest outcome first")
            }
            let lineage = try await store.jobLineage(of: b.id)
            let rows = Dictionary(uniqueKeysWithValues: lineage.outcomes.map { ($0.jobID, $0) })
            #expect(rows[root.id]?.spawned == [a.id, b.id] && rows[root.id]?.outputs == ["fetch": 2])
            #expect(rows[root.id]?.kind == "tmdb.list" && rows[root.id]?.parentID == nil)
            #expect(
                rows[b.id]?.outcome == .deadLettered(.permanent, error: "HTTP 404") && rows[b.id]?.parentID == root.id
            )
            #expect(
                rows[grandchild.id]?.outcome == .retried(tier: 2, error: "HTTP 503")
                    && rows[grandchild.id]?.parentID == a.id
            )
            #expect(rows[grandchild.id]?.source == "marquee.fetch/1/4000" && rows[grandchild.id]?.finishedAt == 4_000)
        }
    }

    @Test(
        "a job the store does not know has no root; a root without its own row is found by its tree",
        arguments: TestEngine.enabled
    )
    func unknownAndRootWithoutRow(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let unknown = try await store.jobLineage(of: JobID(rawValue: "01UNKNOWN"))
            #expect(unknown.rootID == nil && unknown.outcomes.isEmpty && unknown.total == 0)
            let root = Envelope.root()
            _ = try await store.write([outcome(root.child(), at: 1)])
            let lineage = try await store.jobLineage(of: root.id)
            #expect(lineage.rootID == root.id && lineage.total == 1 && lineage.outcomes.count == 1)
        }
    }

    @Test(
        "a tree over the limit gives the path from the root to the job and the job's children",
        arguments: TestEngine.enabled
    )
    func overTheLimit(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = Envelope.root()
            let siblings = (0..<5).map { _ in root.child() }
            let middle = siblings[2]
            let children = (0..<4).map { _ in middle.child() }
            var records = [outcome(root, spawned: siblings, at: 1)]
            records += siblings.enumerated().map {
                outcome($1, spawned: $1 == middle ? children : [], at: 10 + Int64($0))
            }
            records += children.enumerated().map { outcome($1, at: 100 + Int64($0)) }
            _ = try await store.write(records)

            let lineage = try await store.jobLineage(of: middle.id, limit: 3)
            #expect(lineage.total == 10 && !lineage.isWhole)
            #expect(lineage.outcomes.map(\.jobID) == [root.id, middle.id] + children.prefix(3).map(\.id))
            let whole = try await store.jobLineage(of: middle.id, limit: 10)
            #expect(whole.isWhole && whole.outcomes.count == 10)
            await #expect(throws: StoreError.self) { try await store.jobLineage(of: root.id, limit: 0) }
        }
    }

    @Test("a parent loop in damaged rows ends the walk", arguments: TestEngine.enabled)
    func parentLoop(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = JobID(rawValue: "ROOT")
            let (a, b) = (JobID(rawValue: "A"), JobID(rawValue: "B"))
            let rows = [
                Envelope(id: a, root: root, parent: b, attempt: 1), Envelope(id: b, root: root, parent: a, attempt: 1),
            ]
            _ = try await store.write(
                rows.map { outcome($0, at: 5) }
                    + (0..<3).map {
                        outcome(Envelope(id: JobID(rawValue: "C\($0)"), root: root, parent: root, attempt: 1), at: 6)
                    }
            )
            let lineage = try await store.jobLineage(of: a, limit: 1)
            #expect(lineage.total == 5)
            #expect(Set(lineage.outcomes.map(\.jobID)) == [a, b])
        }
    }
}
