import MarqueeCore
import Testing

@testable import MarqueeStore

@Suite("Lineage progress")
struct LineageProgressTests {
    @Test("a crawl is complete once every root and every spawned job finished, and no job waits for a retry", arguments: TestEngine.enabled)
    func completeness(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = Envelope.root()
            let other = Envelope.root()
            let (a, b) = (root.child(), root.child())
            func outcome(_ envelope: Envelope, _ outcome: JobOutcome.Outcome, spawned: [JobID] = [], at time: Int64) -> Record {
                JobOutcome(
                    envelope: envelope, stage: "fetch", kind: "tmdb.list", outcome: outcome,
                    outputs: spawned.isEmpty ? [:] : ["marquee.fetch": spawned.count], spawned: spawned, source: "marquee.fetch/0/\(time)", finishedAt: time
                ).record
            }

            // Nothing yet: the two roots are expected, none finished.
            var progress = try await store.lineageProgress(roots: [root.id, other.id])
            #expect(progress.expected == 2 && progress.finished == 0 && !progress.isComplete)

            // The root is done and spawned two jobs; one of them failed once and waits in a retry tier.
            _ = try await store.write([outcome(root, .done, spawned: [a.id, b.id], at: 1), outcome(a, .retried(tier: 1, error: "503"), at: 2)])
            progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress == expected(roots: 1, expected: 3, finished: 1, deadLettered: 0, retrying: 1))
            #expect(!progress.isComplete)

            // The retry succeeds, the other child is dead-lettered: complete.
            _ = try await store.write([outcome(a, .done, at: 3), outcome(b, .deadLettered(.permanent, error: "404"), at: 4)])
            progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress == expected(roots: 1, expected: 3, finished: 3, deadLettered: 1, retrying: 0))
            #expect(progress.isComplete)

            // The other root has no outcome: asked about together, the crawl is not complete; over all jobs it is.
            #expect(!(try await store.lineageProgress(roots: [root.id, other.id])).isComplete)
            #expect(try await store.lineageProgress().isComplete)
        }
    }

    private func expected(roots: Int, expected: Int, finished: Int, deadLettered: Int, retrying: Int) -> LineageProgress {
        var progress = LineageProgress()
        (progress.roots, progress.expected, progress.finished, progress.deadLettered, progress.retrying) = (roots, expected, finished, deadLettered, retrying)
        return progress
    }
}
