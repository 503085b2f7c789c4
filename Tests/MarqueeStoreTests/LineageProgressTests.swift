import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeStore

@Suite("Lineage progress")
struct LineageProgressTests {
    @Test(
        "a crawl is complete once every root and every spawned job finished, and no job waits for a retry",
        arguments: TestEngine.enabled
    )
    func completeness(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = Envelope.root()
            let other = Envelope.root()
            let (a, b) = (root.child(), root.child())
            func outcome(
                _ envelope: Envelope,
                _ outcome: JobOutcome.Outcome,
                spawned: [JobID] = [],
                at time: Int64
            ) -> Record {
                JobOutcome(
                    envelope: envelope,
                    stage: "fetch",
                    kind: "tmdb.list",
                    outcome: outcome,
                    outputs: spawned.isEmpty ? [:] : ["marquee.fetch": spawned.count],
                    spawned: spawned,
                    source: "marquee.fetch/0/\(time)",
                    finishedAt: time
                ).record
            }

            // Nothing yet: the two roots are expected, none finished.
            var progress = try await store.lineageProgress(roots: [root.id, other.id])
            #expect(progress.expected == 2 && progress.finished == 0 && !progress.isComplete)

            // The root is done and spawned two jobs; one of them failed once and waits in a retry tier.
            _ = try await store.write([
                outcome(root, .done, spawned: [a.id, b.id], at: 1), outcome(a, .retried(tier: 1, error: "503"), at: 2),
            ])
            progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress == expected(roots: 1, expected: 3, finished: 1, deadLettered: 0, retrying: 1))
            #expect(!progress.isComplete)

            // The retry succeeds, the other child is dead-lettered: complete.
            _ = try await store.write([
                outcome(a, .done, at: 3), outcome(b, .deadLettered(.permanent, error: "404"), at: 4),
            ])
            progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress == expected(roots: 1, expected: 3, finished: 3, deadLettered: 1, retrying: 0))
            #expect(progress.isComplete)

            // The other root has no outcome: asked about together, the crawl is not complete; over all jobs it is.
            #expect(!(try await store.lineageProgress(roots: [root.id, other.id])).isComplete)
            #expect(try await store.lineageProgress().isComplete)
        }
    }

    @Test(
        "a late retry never sends a finished job back to waiting, in one batch or across batches",
        arguments: TestEngine.enabled
    )
    func lateRetriesDoNotRegress(engine: TestEngine) async throws {
        try await engine.withStore { store in
            func outcome(_ envelope: Envelope, _ outcome: JobOutcome.Outcome, at time: Int64) -> Record {
                JobOutcome(
                    envelope: envelope,
                    stage: "fetch",
                    kind: "tmdb.movie",
                    outcome: outcome,
                    outputs: [:],
                    spawned: [],
                    source: "marquee.fetch/0/1",
                    finishedAt: time
                ).record
            }
            // A worker cut off from the cluster routes the job to a retry tier after another finished it: its
            // outcome arrives later, with a later time, for the same attempt.
            let (done, dead, batched) = (Envelope.root(), Envelope.root(), Envelope.root())
            _ = try await store.write([
                outcome(done, .done, at: 10), outcome(dead, .deadLettered(.permanent, error: "404"), at: 10),
            ])
            _ = try await store.write([
                outcome(done, .retried(tier: 1, error: "timeout"), at: 20),
                outcome(dead, .retried(tier: 1, error: "timeout"), at: 20),
            ])
            _ = try await store.write([
                outcome(batched, .done, at: 10), outcome(batched, .retried(tier: 1, error: "timeout"), at: 20),
            ])
            let progress = try await store.lineageProgress(roots: [done.id, dead.id, batched.id])
            #expect(progress == expected(roots: 3, expected: 3, finished: 3, deadLettered: 1, retrying: 0))
            #expect(progress.isComplete)

            // Nor does a retry of a later attempt: a second copy of the job (its parent ran twice and sent it again)
            // that failed after the first copy finished. A finished outcome of it is taken.
            var later = done
            later.attempt = 2
            _ = try await store.write([outcome(later, .retried(tier: 1, error: "503"), at: 30)])
            #expect(try await store.lineageProgress(roots: [done.id]).retrying == 0)
            _ = try await store.write([outcome(later, .deadLettered(.transient, error: "503"), at: 40)])
            #expect(
                try await store.lineageProgress(roots: [done.id])
                    == expected(roots: 1, expected: 1, finished: 1, deadLettered: 1, retrying: 0)
            )
            // A retried outcome still replaces a retried one, as every later report does.
            let waiting = Envelope.root()
            _ = try await store.write([outcome(waiting, .retried(tier: 1, error: "503"), at: 10)])
            var second = waiting
            second.attempt = 2
            _ = try await store.write([outcome(second, .retried(tier: 2, error: "503"), at: 20)])
            #expect(try await store.lineageProgress(roots: [waiting.id]).retrying == 1)
        }
    }

    @Test(
        "a job handled twice keeps what each run spawned, in one batch or across batches",
        arguments: TestEngine.enabled
    )
    func redeliveredJobsAccumulate(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let root = Envelope.root()
            let (a, b, c) = (root.child(), root.child(), root.child())
            func done(spawned: [JobID], records: Int = 20, at time: Int64) -> Record {
                JobOutcome(
                    envelope: root,
                    stage: "fetch",
                    kind: "tmdb.list",
                    outcome: .done,
                    outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count, "records": records],
                    spawned: spawned,
                    source: "marquee.fetch/0/1",
                    finishedAt: time
                ).record
            }
            func row() async throws -> (spawned: Set<String>, outputs: String) {
                let rows = try await store.engine.read(
                    "SELECT spawned, outputs FROM job_outcomes WHERE job_id = '\(root.id)'",
                    []
                )
                let spawned = try JSONValue.parse(Array((rows.first?[0].text ?? "").utf8))
                guard case .array(let ids) = spawned else { return ([], "") }
                let outputs = try JSONValue.parse(Array((rows.first?[1].text ?? "").utf8))
                return (
                    Set(ids.compactMap { if case .string(let id) = $0 { id } else { nil } }),
                    String(decoding: outputs.encoded(), as: UTF8.self)
                )
            }

            // The first run spawned a and b; the redelivered run got a 304 and spawned nothing.
            _ = try await store.write([done(spawned: [a.id, b.id], at: 1)])
            _ = try await store.write([done(spawned: [], at: 2)])
            var progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress.expected == 3, "a and b are still expected")
            #expect(!progress.isComplete)
            #expect(try await row().spawned == [a.id.rawValue, b.id.rawValue])

            // A third run (the data changed) spawned b and c, with fewer records: the union, the larger counts.
            _ = try await store.write([done(spawned: [b.id, c.id], records: 10, at: 3)])
            #expect(try await row().spawned == [a.id.rawValue, b.id.rawValue, c.id.rawValue])
            #expect(try await row().outputs == #"{"fetch":2,"records":20}"#)
            progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress.expected == 4)

            // Runs in one batch merge the same way.
            let other = Envelope.root()
            let (d, e) = (other.child(), other.child())
            func run(_ spawned: [JobID], at time: Int64) -> Record {
                JobOutcome(
                    envelope: other,
                    stage: "fetch",
                    kind: "tmdb.list",
                    outcome: .done,
                    outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count],
                    spawned: spawned,
                    source: "marquee.fetch/0/2",
                    finishedAt: time
                ).record
            }
            _ = try await store.write([run([d.id], at: 5), run([], at: 6), run([e.id], at: 7)])
            #expect(try await store.lineageProgress(roots: [other.id]).expected == 3)
        }
    }

    @Test(
        "a job no parent names does not hide a spawned job or a root that never finished",
        arguments: TestEngine.enabled
    )
    func unnamedJobsDoNotHideUnfinishedOnes(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let (root, other) = (Envelope.root(), Envelope.root())
            let (a, b, stray, strayOfOther) = (root.child(), root.child(), root.child(), other.child())
            func done(_ envelope: Envelope, spawned: [JobID] = []) -> Record {
                JobOutcome(
                    envelope: envelope,
                    stage: "fetch",
                    kind: "tmdb.list",
                    outcome: .done,
                    outputs: spawned.isEmpty ? [:] : ["fetch": spawned.count],
                    spawned: spawned,
                    source: "marquee.fetch/0/1",
                    finishedAt: 1
                ).record
            }
            // The root spawned a and b; a finished, b never ran. A job of an earlier run of the root that no
            // outcome names finished too: the counts (3 known, 3 finished) say the crawl is complete.
            _ = try await store.write([done(root, spawned: [a.id, b.id]), done(a), done(stray)])
            var progress = try await store.lineageProgress(roots: [root.id])
            #expect(progress.expected == 3 && progress.finished == 3 && progress.countsSayComplete)
            #expect(progress.unfinished == 1 && progress.firstUnfinished == b.id)
            #expect(!progress.isComplete)
            #expect(try await store.lineageProgress().unfinished == 1, "over every job as well")

            // A root asked about without an outcome, hidden the same way by a stray job of its own tree.
            _ = try await store.write([done(b), done(strayOfOther)])
            #expect(try await store.lineageProgress(roots: [root.id]).isComplete)
            progress = try await store.lineageProgress(roots: [root.id, other.id])
            #expect(progress.countsSayComplete && progress.unfinished == 1 && progress.firstUnfinished == other.id)
            #expect(!progress.isComplete)
            _ = try await store.write([done(other)])
            #expect(try await store.lineageProgress(roots: [root.id, other.id]).isComplete)
        }
    }

    private func expected(roots: Int, expected: Int, finished: Int, deadLettered: Int, retrying: Int) -> LineageProgress
    {
        var progress = LineageProgress()
        (progress.roots, progress.expected, progress.finished, progress.deadLettered, progress.retrying) = (
            roots, expected, finished, deadLettered, retrying
        )
        // Checked one by one only when the counts say every job finished; here none is left unfinished.
        if progress.countsSayComplete { progress.unfinished = 0 }
        return progress
    }
}
