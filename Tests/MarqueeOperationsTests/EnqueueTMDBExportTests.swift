import MarqueeCore
import MarqueeOperations
import Testing

/// Collects what a run sends.
final class SentJobs: @unchecked Sendable {
    var batches: [[FetchJob]] = []
    var ids: [Int64] {
        self.batches.joined().compactMap { job in
            if case .tmdbMovie(let id, _, _) = job { return id }
            return nil
        }
    }
}

@Suite struct EnqueueTMDBExportTests {
    static let plan = try! TMDBExportPlan(
        filter: TMDBExportFilter(minPopularity: 1),
        languages: ["ko-KR"],
        follow: Follow(details: true, images: true)
    )

    static func run(
        _ path: String,
        from checkpoint: TMDBExportCheckpoint? = nil,
        state: String? = nil,
        pacing: EnqueuePacing = EnqueuePacing(rate: 0, maxBacklog: 0),
        sent: SentJobs,
        backlog: @escaping () -> Int = { 0 },
        stopAfter: Int? = nil,
        problems: ((String) -> Void)? = nil
    ) async throws -> (EnqueueTMDBExport.Ending, TMDBExportCheckpoint) {
        var pacing = pacing
        pacing.batchSize = 100
        let enqueue = EnqueueTMDBExport(plan: Self.plan, pacing: pacing)
        let reader = try TMDBExportReader(path: path)
        let start =
            checkpoint ?? TMDBExportCheckpoint(export: "x", path: path, size: reader.size, options: plan.fingerprint)
        return try await enqueue.run(
            reader: reader,
            checkpoint: start,
            statePath: state,
            send: { sent.batches.append($0) },
            backlog: backlog,
            shouldStop: { stopAfter.map { sent.batches.count >= $0 } ?? false },
            problem: problems ?? { _ in }
        )
    }

    @Test func everyAdmittedMovieIsOneJobAndBadLinesAreNamedAndSkipped() async throws {
        var lines = exportLines(1...1000)  // popularity id % 10: 0 is filtered; adult every 50th
        lines[9] = "{\"id\":"
        lines.insert("", at: 20)
        let file = TemporaryFile(try gzipped(lines))
        defer { file.remove() }
        let sent = SentJobs()
        var problems: [String] = []
        let (ending, checkpoint) = try await Self.run(file.path, sent: sent, problems: { problems.append($0) })
        #expect(ending == .complete)
        let expected = (1...1000).filter { $0 != 10 && $0 % 10 != 0 && $0 % 50 != 0 }.map(Int64.init)
        #expect(sent.ids == expected)
        #expect(sent.batches.allSatisfy { $0.count <= 100 })
        #expect(sent.batches.first?.first == .tmdbMovie(id: 1, language: "ko-KR", follow: Follow(images: true)))
        #expect(problems == ["line 10: not a JSON value"])
        #expect(checkpoint.isComplete && checkpoint.line == 1001)
        #expect(
            checkpoint.jobs == expected.count && checkpoint.bad == 1 && checkpoint.filtered == 1000 - 1 - expected.count
        )
    }

    @Test func aStoppedRunResumesFromItsStateFileSendingNothingTwice() async throws {
        // Unsorted ids: resuming goes by line, not by id.
        var generator = SystemRandomNumberGenerator()
        let ids = Array(1...2000).map { $0 * 7 }.shuffled(using: &generator)
        let file = TemporaryFile(try gzipped(exportLines(ids, popularity: { _ in 5 })))
        let state = TemporaryFile([], suffix: ".state")
        defer {
            file.remove()
            state.remove()
        }
        let first = SentJobs()
        let (ending, stopped) = try await Self.run(file.path, state: state.path, sent: first, stopAfter: 3)
        #expect(ending == .stopped)
        let saved = try #require(try TMDBExportCheckpoint.read(from: state.path))
        #expect(saved == stopped && !saved.isComplete)
        #expect(saved.jobs == first.ids.count && saved.lastSent?.id == first.ids.last)

        let second = SentJobs()
        let (resumed, final) = try await Self.run(file.path, from: saved, state: state.path, sent: second)
        #expect(resumed == .complete)
        let all = first.ids + second.ids
        let admitted = ids.filter { $0 % 50 != 0 }.map(Int64.init)
        #expect(all == admitted, "every admitted id once, in the export's order")
        #expect(try TMDBExportCheckpoint.read(from: state.path) == final)
        #expect(final.jobs == admitted.count)
    }

    @Test func resumingOnAnotherExportIsRefused() async throws {
        let file = TemporaryFile(try gzipped(exportLines(1...500)))
        let other = TemporaryFile(try gzipped(exportLines(1001...1500)))
        defer {
            file.remove()
            other.remove()
        }
        let (_, stopped) = try await Self.run(file.path, sent: SentJobs(), stopAfter: 1)
        await #expect {
            _ = try await Self.run(other.path, from: stopped, sent: SentJobs())
        } throws: {
            ($0 as? OperationsError)?.reason.contains("is not the export the state file describes") == true
        }
    }

    @Test func tooManyBadLinesStopTheRunAfterSendingWhatCameBefore() async throws {
        let lines = exportLines(1...300, popularity: { _ in 5 }) + Array(repeating: "garbage", count: 200)
        let file = TemporaryFile(try gzipped(lines))
        defer { file.remove() }
        let sent = SentJobs()
        await #expect {
            _ = try await Self.run(file.path, sent: sent)
        } throws: {
            ($0 as? OperationsError)?.reason.contains("more than 100 bad lines") == true
        }
        #expect(sent.ids.count == 300 - 6)
    }

    @Test func theBacklogNeverPassesItsBound() async throws {
        let file = TemporaryFile(try gzipped(exportLines(1...3000, popularity: { _ in 5 })))
        defer { file.remove() }
        var pacing = EnqueuePacing(rate: 0, maxBacklog: 400)
        pacing.batchSize = 100
        pacing.backlogPoll = .milliseconds(1)
        let reader = try TMDBExportReader(path: file.path)
        // A fetch stage that takes 150 jobs each time the backlog is asked.
        var delivered = 0
        var consumed = 0
        var worst = 0
        var asked = 0
        let (ending, checkpoint) = try await EnqueueTMDBExport(plan: Self.plan, pacing: pacing).run(
            reader: reader,
            checkpoint: TMDBExportCheckpoint(export: "x", path: file.path, size: reader.size, options: ""),
            statePath: nil,
            send: { batch in
                delivered += batch.count
                worst = max(worst, delivered - consumed)
            },
            backlog: {
                asked += 1
                consumed = min(delivered, consumed + 150)
                return delivered - consumed
            }
        )
        #expect(ending == .complete && checkpoint.jobs == 3000 - 60)
        #expect(worst <= 400 && worst > 200, "the bound is reached, never passed")
        #expect(asked > 3000 / 150 / 2, "sending waited for the stage")
    }

    @Test func theRateSpacesTheBatches() async throws {
        let file = TemporaryFile(try gzipped(exportLines(1...60, popularity: { _ in 5 })))
        defer { file.remove() }
        let clock = ContinuousClock()
        let start = clock.now
        let sent = SentJobs()
        // 100 jobs a second: batches of 25, the third due after 0.5 s.
        _ = try await Self.run(file.path, pacing: EnqueuePacing(rate: 100, maxBacklog: 0), sent: sent)
        #expect(sent.batches.map(\.count) == [25, 25, 9])
        #expect(clock.now - start >= .milliseconds(500))
    }
}
