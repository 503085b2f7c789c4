import MarqueeKafka
import Synchronization
import Testing

@testable import MarqueePipeline

@Suite struct StageJobsTests {
    /// A job whose send waits until it is cancelled, then fails as `KafkaProducer.deliver` does then.
    private static func sendRefusedOnCancel() async throws {
        do {
            try await Task.sleep(for: .seconds(600))
        } catch {
            throw KafkaError(code: .cancelled, reason: "the sending task was cancelled")
        }
    }

    @Test func aJobCancelledBecauseItsPartitionWasRevokedIsHandedBackAndTheStageGoesOn() async {
        let stops = Atomic<Int>(0)
        let jobs = StageJobs(onFailure: { stops.add(1, ordering: .relaxed) })
        let owned = Atomic<Bool>(true)
        jobs.start(
            JobContext(jobID: nil, kind: "tmdb.movie", phase: "delivering outputs"),
            isOwned: {
                owned.load(ordering: .relaxed)
            }
        ) {
            try await Self.sendRefusedOnCancel()
        }
        owned.store(false, ordering: .relaxed)
        #expect(jobs.cancelDisowned() == 1)
        #expect(await jobs.waitUntilIdle(timeout: .seconds(30)))
        #expect(!jobs.hasFailed && jobs.failure == nil && stops.load(ordering: .relaxed) == 0)
    }

    @Test func aJobThatFailsToSendWhileItStillOwnsItsMessageStopsTheStage() async {
        let stops = Atomic<Int>(0)
        let jobs = StageJobs(onFailure: { stops.add(1, ordering: .relaxed) })
        jobs.start(JobContext(jobID: nil, kind: "tmdb.movie", phase: "delivering outputs")) {
            throw KafkaError(code: .cancelled, reason: "the sending task was cancelled")
        }
        #expect(await jobs.waitUntilIdle(timeout: .seconds(30)))
        #expect(jobs.hasFailed && stops.load(ordering: .relaxed) == 1)

        // Cancelled, but stopped by another error (the broker timed the send out): the stage stops too.
        let other = StageJobs(onFailure: {})
        let owned = Atomic<Bool>(true)
        other.start(
            JobContext(jobID: nil, kind: "tmdb.movie", phase: "delivering outputs"),
            isOwned: {
                owned.load(ordering: .relaxed)
            }
        ) {
            do { try await Task.sleep(for: .seconds(600)) } catch {}
            throw KafkaError(code: .timedOut, reason: "Local: Message timed out")
        }
        owned.store(false, ordering: .relaxed)
        #expect(other.cancelDisowned() == 1)
        #expect(await other.waitUntilIdle(timeout: .seconds(30)))
        #expect(other.hasFailed)
    }
}
