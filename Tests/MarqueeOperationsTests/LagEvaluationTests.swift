import MarqueeKafka
import MarqueeOperations
import Testing

/// The status rules, rate and drain time, driven with synthetic samples.
@Suite struct LagEvaluationTests {
    // MARK: - OK

    @Test func aGroupThatIsCaughtUpIsOK() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 10, end: 10)]),
            observe(at: 1000, [sample(at: 1000, committed: 12, end: 12)]),
            observe(at: 2000, [sample(at: 2000, committed: 15, end: 15)]),
        ])
        #expect(result.status == .ok)
        #expect(result.reason == "caught up")
        #expect(result.totals.lag == 0)
        #expect(result.totals.drainTime == .zero)
        #expect(result.partitions[0].rate == 2.5)
    }

    @Test func aGroupWhoseLagShrinksIsOKWithRateAndDrainTime() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 0, end: 100)]),
            observe(at: 1000, [sample(at: 1000, committed: 10, end: 100)]),
            observe(at: 2000, [sample(at: 2000, committed: 20, end: 100)]),
        ])
        #expect(result.status == .ok)
        #expect(result.reason == "80 messages due, consuming at 10.0/s")
        let partition = result.partitions[0]
        #expect(partition.rate == 10)
        #expect(partition.drainTime == .seconds(8))
        #expect(result.totals.rate == 10)
        #expect(result.totals.drainTime == .seconds(8))
        #expect(result.window == .seconds(2))
        #expect(result.samples == 3)
    }

    @Test func lagThatStaysFlatWhileCommitsMoveIsOK() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 0, end: 10)]),
            observe(at: 1000, [sample(at: 1000, committed: 5, end: 15)]),
            observe(at: 2000, [sample(at: 2000, committed: 10, end: 20)]),
        ])
        #expect(result.status == .ok)
    }

    @Test func lagThatFellOnceInTheWindowIsNotLagging() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 0, end: 10)]),
            observe(at: 1000, [sample(at: 1000, committed: 5, end: 13)]),
            observe(at: 2000, [sample(at: 2000, committed: 6, end: 30)]),
        ])
        #expect(result.partitions[0].status == .ok)
        #expect(result.status == .ok)
    }

    @Test func aSingleSampleCannotShowMovement() {
        let result = evaluate([observe(at: 0, [sample(at: 0, committed: 3, end: 50)])])
        #expect(result.status == .ok)
        #expect(result.reason == "one sample: at least two are needed to see movement")
        #expect(result.partitions[0].rate == nil)
        #expect(result.partitions[0].drainTime == nil)
    }

    // MARK: - LAGGING

    @Test func lagGrowingAcrossTheWindowWhileCommitsMoveIsLagging() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 0, end: 10)]),
            observe(at: 1000, [sample(at: 1000, committed: 5, end: 20)]),
            observe(at: 2000, [sample(at: 2000, committed: 10, end: 30)]),
        ])
        #expect(result.status == .lagging)
        #expect(result.reason == "due lag grew from 10 to 20 in 2.0 s while commits moved: marquee.fetch[0]")
        #expect(result.partitions[0].rate == 5)
        #expect(result.partitions[0].drainTime == .seconds(4))
    }

    @Test func twoSamplesWithGrowingLagAreEnoughForLagging() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 0, end: 10)]),
            observe(at: 500, [sample(at: 500, committed: 1, end: 12)]),
        ])
        #expect(result.status == .lagging)
    }

    @Test func lagGrowingFromZeroIsNotLagging() {
        // Burrow's rule: a window with a zero lag in it is fine.
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 10, end: 10)]),
            observe(at: 1000, [sample(at: 1000, committed: 12, end: 20)]),
            observe(at: 2000, [sample(at: 2000, committed: 14, end: 30)]),
        ])
        #expect(result.status == .ok)
    }

    // MARK: - STALLED

    @Test func dueMessagesAndNoCommitAcrossTheWindowIsStalled() {
        let result = evaluate([
            observe(at: 0, [sample(0, at: 0, committed: 4, end: 10), sample(1, at: 0, committed: 7, end: 7)]),
            observe(at: 1000, [sample(0, at: 1000, committed: 4, end: 10), sample(1, at: 1000, committed: 9, end: 9)]),
            observe(at: 2000, [sample(0, at: 2000, committed: 4, end: 12), sample(1, at: 2000, committed: 9, end: 9)]),
        ])
        #expect(result.status == .stalled)
        #expect(result.reason == "messages due and no commit in 2.0 s: marquee.fetch[0] at 4 (lag 8)")
        #expect(result.partitions.map(\.status) == [.stalled, .ok])
        #expect(result.partitions[0].rate == 0)
        #expect(result.partitions[0].drainTime == nil)
    }

    @Test func aGroupThatNeverCommittedAndHasLagIsStalled() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: nil, end: 5)]),
            observe(at: 3000, [sample(at: 3000, committed: nil, end: 5)]),
        ])
        #expect(result.status == .stalled)
        #expect(result.reason.contains("marquee.fetch[0] at none (lag 5)"))
    }

    @Test func lagThatAppearedWithinTheWindowIsNotStalled() {
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 4, end: 4)]),
            observe(at: 1000, [sample(at: 1000, committed: 4, end: 6)]),
            observe(at: 2000, [sample(at: 2000, committed: 4, end: 6)]),
        ])
        #expect(result.status == .ok)
        #expect(result.reason == "2 messages due, consuming at 0.0/s")
    }

    @Test func theWorstPartitionDecidesAndStalledOutranksLagging() {
        let result = evaluate([
            observe(at: 0, [sample(0, at: 0, committed: 0, end: 10), sample(1, at: 0, committed: 2, end: 5)]),
            observe(at: 1000, [sample(0, at: 1000, committed: 5, end: 20), sample(1, at: 1000, committed: 2, end: 5)]),
        ])
        #expect(result.partitions.map(\.status) == [.lagging, .stalled])
        #expect(result.status == .stalled)
        #expect(LagStatus.allCases.sorted() == [.ok, .lagging, .stalled, .stopped])
    }

    @Test func aPartitionThatAppearedDuringTheWindowIsJudgedOnItsOwnSamples() {
        let result = evaluate([
            observe(at: 0, [sample(0, at: 0, committed: 0, end: 0)]),
            observe(at: 1000, [sample(0, at: 1000, committed: 0, end: 0), sample(1, at: 1000, committed: 3, end: 8)]),
            observe(at: 2000, [sample(0, at: 2000, committed: 0, end: 0), sample(1, at: 2000, committed: 3, end: 8)]),
        ])
        let appeared = result.partitions[1]
        #expect(appeared.samples == 2)
        #expect(appeared.status == .stalled)
        #expect(result.reason == "messages due and no commit in 1.0 s: marquee.fetch[1] at 3 (lag 5)")
    }

    // MARK: - STOPPED

    @Test func aGroupWithoutMembersIsStoppedOnlyWhenMessagesAreDue() {
        let waiting = evaluate([
            observe(members: 0, at: 0, [sample(at: 0, committed: 4, end: 10)]),
            observe(members: 0, at: 1000, [sample(at: 1000, committed: 4, end: 10)]),
        ])
        #expect(waiting.status == .stopped)
        #expect(waiting.reason == "no member in group marquee-fetch; 6 messages due")

        let idle = evaluate([observe(members: 0, at: 0, [sample(at: 0, committed: 10, end: 10)])])
        #expect(idle.status == .ok, "a group with nothing due is caught up, members or not")
        #expect(idle.reason == "no member in group marquee-fetch; nothing due")
    }

    @Test func membershipIsTakenFromTheLatestObservation() {
        let result = evaluate([
            observe(members: 0, at: 0, [sample(at: 0, committed: 4, end: 10)]),
            observe(members: 2, at: 1000, [sample(at: 1000, committed: 6, end: 10)]),
        ])
        #expect(result.status == .ok)
        #expect(result.members == 2)
    }

    // MARK: - Retry tiers

    @Test func notYetDueAndOverdueAreSplitByNotBefore() {
        let backlog = RetryBacklog(notBefores: [nil, 900, 1000, 1001, 5000], unscanned: 7, now: 1000)
        #expect(backlog.overdue == 3)
        #expect(backlog.notYetDue == 2)
        #expect(backlog.unscanned == 7)
        #expect(backlog.headNotBefore == nil)
        #expect(backlog.isHeadDue)

        let waiting = RetryBacklog(notBefores: [2000, 500], unscanned: 0, now: 1000)
        #expect(waiting.headNotBefore == 2000)
        #expect(!waiting.isHeadDue)
        #expect(waiting.overdue == 1 && waiting.notYetDue == 1)

        let empty = RetryBacklog(notBefores: [], unscanned: 0, now: 1000)
        #expect(!empty.isHeadDue && empty.overdue == 0 && empty.notYetDue == 0)
    }

    @Test func aRetryTierWaitingForItsFirstMessagesTimeIsNotStalled() {
        func retry(at time: Int64) -> LagSample {
            sample(
                tier: 1,
                at: time,
                committed: 2,
                end: 7,
                retry: RetryBacklog(notBefores: [60_000, 60_000, 60_000, 100, 100], unscanned: 0, now: time)
            )
        }
        let result = evaluate([
            observe(at: 0, [sample(at: 0, committed: 5, end: 5), retry(at: 0)]),
            observe(at: 1000, [sample(at: 1000, committed: 5, end: 5), retry(at: 1000)]),
            observe(at: 2000, [sample(at: 2000, committed: 5, end: 5), retry(at: 2000)]),
        ])
        #expect(result.status == .ok)
        let tier = result.partitions[1]
        #expect(tier.status == .ok)
        #expect(tier.lag == 5)
        #expect(tier.dueLag == 2)
        #expect(result.totals.lag == 5)
        #expect(result.totals.dueLag == 2)
        #expect(result.totals.notYetDue == 3)
        #expect(result.totals.overdue == 2)
        #expect(result.reason == "2 messages due, consuming at 0.0/s (3 more not yet due)")
    }

    @Test func aRetryTierWhoseFirstMessageIsOverdueAndDoesNotMoveIsStalled() {
        func retry(at time: Int64) -> LagSample {
            sample(
                tier: 2,
                at: time,
                committed: 2,
                end: 4,
                retry: RetryBacklog(notBefores: [-5, 90_000], unscanned: 0, now: time)
            )
        }
        let result = evaluate([observe(at: 0, [retry(at: 0)]), observe(at: 1500, [retry(at: 1500)])])
        #expect(result.status == .stalled)
        #expect(result.totals.dueLag == 1)
        #expect(result.totals.notYetDue == 1)
    }

    @Test func aRetryTierWhoseFirstMessageBecameDueDuringTheWindowIsNotStalled() {
        func retry(at time: Int64) -> LagSample {
            sample(
                tier: 1,
                at: time,
                committed: 0,
                end: 1,
                retry: RetryBacklog(notBefores: [1000], unscanned: 0, now: time)
            )
        }
        let result = evaluate([observe(at: 0, [retry(at: 0)]), observe(at: 2000, [retry(at: 2000)])])
        #expect(result.status == .ok)
    }

    @Test func aRetryTierWithUnreadBacklogCountsNothingDue() {
        let unread = sample(tier: 1, at: 0, committed: 0, end: 9)
        #expect(unread.dueLag == 0)
        #expect(!unread.hasDueWork)
        let result = evaluate([
            observe(at: 0, [unread]), observe(at: 1000, [sample(tier: 1, at: 1000, committed: 0, end: 9)]),
        ])
        #expect(result.status == .ok)
        #expect(result.totals.lag == 9)
        #expect(result.totals.dueLag == 0)
    }

    // MARK: - Ages, rates, drain times, totals

    @Test func lagAgeIsTheAgeOfTheOldestUnconsumedMessageAndTotalsTakeTheOldestDue() {
        let result = evaluate([
            observe(
                at: 10_000,
                [
                    sample(0, at: 10_000, committed: 1, end: 3, oldest: 7_500),
                    sample(1, at: 10_000, committed: 3, end: 3, oldest: 1),
                    sample(
                        tier: 1,
                        at: 10_000,
                        committed: 0,
                        end: 1,
                        oldest: 100,
                        retry: RetryBacklog(notBefores: [20_000], unscanned: 0, now: 10_000)
                    ),
                ]
            )
        ])
        #expect(result.partitions[0].lagAge == .milliseconds(2500))
        #expect(result.partitions[1].lagAge == nil)
        #expect(result.partitions[2].lagAge == .milliseconds(9900))
        // The retry message is not due yet: its wait is not lag the group should have run.
        #expect(result.totals.lagAge == .milliseconds(2500))
    }

    @Test func rateAndDrainTimeEdges() {
        #expect(LagEvaluation.rate([sample(at: 0, committed: 1, end: 9)]) == nil)
        #expect(LagEvaluation.rate([sample(at: 0, committed: 1, end: 9), sample(at: 0, committed: 5, end: 9)]) == nil)
        // Offsets reset backwards: no rate.
        #expect(
            LagEvaluation.rate([sample(at: 0, committed: 8, end: 9), sample(at: 1000, committed: 2, end: 9)]) == nil
        )
        // Never committed, then committed: progress from the partition's start.
        #expect(
            LagEvaluation.rate([sample(at: 0, committed: nil, end: 9), sample(at: 2000, committed: 4, end: 9)]) == 2
        )
        #expect(LagEvaluation.drainTime(dueLag: 0, rate: nil) == .zero)
        #expect(LagEvaluation.drainTime(dueLag: -3, rate: 1) == .zero)
        #expect(LagEvaluation.drainTime(dueLag: 5, rate: 0) == nil)
        #expect(LagEvaluation.drainTime(dueLag: 5, rate: nil) == nil)
        #expect(LagEvaluation.drainTime(dueLag: 10, rate: 4) == .milliseconds(2500))
    }

    @Test func anEndBelowTheCommitCountsAsZeroAndIsExplainedOnce() {
        let below = sample(at: 0, committed: 12, end: 10)
        #expect(below.lag == 0)
        #expect(below.isEndBelowPosition)
        #expect(below.dueLag == 0 && !below.hasDueWork)
        let result = evaluate([
            observe(at: 0, [below, sample(1, at: 0, committed: 4, end: 7), sample(2, at: 0, committed: 9, end: 6)])
        ])
        // The sum is what waits (3 on partition 1), never pulled below it by the partitions that read low.
        #expect(result.totals.lag == 3)
        #expect(result.partitions.allSatisfy { $0.lag >= 0 })
        let notes = result.notes.filter { $0.contains("below the committed offset") }
        #expect(notes.count == 1, "one note for the group: \(result.notes)")
        #expect(notes.first?.hasPrefix("2 partitions counted as lag 0") == true, "\(notes)")
        #expect(notes.first?.contains("marquee.fetch[0] end 10 < committed 12") == true, "\(notes)")
        #expect(notes.first?.contains("marquee.fetch[2] end 6 < committed 9") == true, "\(notes)")
        // Nothing to say when every end is at or past the commit.
        #expect(LagEvaluation.endBelowCommitNote([sample(at: 0, committed: 10, end: 10)]) == nil)
        // Retention deleted past the committed offset: the group resumes at the start.
        #expect(sample(at: 0, committed: 3, start: 8, end: 10).lag == 2)
        #expect(sample(at: 0, committed: nil, start: 8, end: 10).lag == 2)
    }

    @Test func aGroupWithoutMembersWhileAnotherConsumesItsTopicsSaysWhichAndTheVariable() {
        var latest = observe(group: "marquee.fetch", members: 0, at: 1000, [sample(at: 1000, committed: 2, end: 316)])
        latest.otherConsumers = ["marquee-fetch"]
        let result = evaluate([
            observe(group: "marquee.fetch", members: 0, at: 0, [sample(at: 0, committed: 2, end: 316)]), latest,
        ])
        #expect(result.status == .stopped)
        #expect(
            result.reason
                == "group marquee.fetch has no member and lag 314 while marquee-fetch consumes its topics; "
                + "MARQUEE_GROUP_FETCH picks the group read here (MARQUEE_GROUP_FETCH=marquee-fetch)"
        )
        #expect(result.unread?.consumers == ["marquee-fetch"])
        // Without another consumer it is the plain stopped group; with members, nobody's notice at all.
        let alone = evaluate([observe(group: "marquee.fetch", members: 0, at: 0, [sample(at: 0, committed: 2, end: 5)])]
        )
        #expect(alone.unread == nil)
        #expect(alone.reason == "no member in group marquee.fetch; 3 messages due")
        var consumed = observe(group: "marquee.fetch", members: 1, at: 0, [sample(at: 0, committed: 2, end: 5)])
        consumed.otherConsumers = ["marquee-fetch"]
        #expect(evaluate([consumed]).unread == nil)
    }

    @Test func unscannedRetryMessagesAreNoted() {
        let result = evaluate([
            observe(
                at: 0,
                [
                    sample(
                        tier: 3,
                        at: 0,
                        committed: 0,
                        end: 12,
                        retry: RetryBacklog(notBefores: [1, 2], unscanned: 10, now: 5)
                    )
                ]
            )
        ])
        #expect(result.totals.unscanned == 10)
        #expect(result.totals.dueLag == 2)
        #expect(result.notes.contains { $0.contains("10 unconsumed messages past the scan limit") })
    }

    // MARK: - The window

    @Test func theWindowKeepsTheLatestObservationsPerStage() {
        var window = LagWindow(capacity: 2)
        window.append([observe(at: 0, [sample(at: 0, committed: 4, end: 10)]), observe(stage: "images", at: 0, [])])
        window.append([observe(at: 1000, [sample(at: 1000, committed: 4, end: 10)])])
        window.append([observe(at: 2000, [sample(at: 2000, committed: 6, end: 10)])])
        #expect(window.stages == ["fetch", "images"])
        #expect(window.observations(of: "fetch").map(\.time) == [1000, 2000])
        #expect(window.observations(of: "images").count == 1)
        #expect(window.observationCount == 2)
        let results = window.evaluate()
        #expect(results.map(\.stage) == ["fetch", "images"])
        // The stall at 0…1000 fell out of the window.
        #expect(results[0].status == .ok)
        #expect(results[0].partitions[0].rate == 2)

        // Another group for the stage starts its history anew.
        window.append([observe(group: "other", at: 3000, [sample(at: 3000, committed: 0, end: 10)])])
        #expect(window.observations(of: "fetch").map(\.group) == ["other"])
    }

    @Test func aTargetOfAStageConsumesItsMainTopicAndRetryTiersButNotItsDeadLetters() throws {
        let layout = try PipelineLayout(settings: ["MARQUEE_TOPIC_PREFIX": "t.", "MARQUEE_RETRY_DELAYS": "1s,2s"])
        let target = LagTarget(stage: try #require(layout.stage("images")))
        #expect(target.group == "t.images")
        #expect(
            target.topics == [
                .init(name: "t.images"), .init(name: "t.images.retry.1", tier: 1),
                .init(name: "t.images.retry.2", tier: 2),
            ]
        )
        #expect(LagTarget(stage: try #require(layout.stage("images")), group: "posters").group == "posters")
    }
}

// MARK: - Samples

func sample(
    _ partition: Int32 = 0,
    tier: Int? = nil,
    at time: Int64,
    committed: Int64?,
    start: Int64 = 0,
    end: Int64,
    oldest: Int64? = nil,
    retry: RetryBacklog? = nil
) -> LagSample {
    let topic = tier.map { "marquee.fetch.retry.\($0)" } ?? "marquee.fetch"
    return LagSample(
        partition: KafkaTopicPartition(topic: topic, partition: partition),
        tier: tier,
        time: time,
        committed: committed,
        start: start,
        end: end,
        oldestUnconsumedTimestamp: oldest,
        retry: retry
    )
}

func observe(
    stage: String = "fetch",
    group: String = "marquee-fetch",
    members: Int = 1,
    at time: Int64,
    _ samples: [LagSample]
) -> GroupObservation {
    GroupObservation(stage: stage, group: group, time: time, members: members, partitions: samples)
}

func evaluate(_ window: [GroupObservation]) -> GroupLag {
    LagEvaluation.evaluate(window)
}
