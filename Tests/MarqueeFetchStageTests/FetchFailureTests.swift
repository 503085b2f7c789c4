import MarqueeCore
import MarqueeFetchStage
import MarqueePipeline
import MarqueeSources
import Testing

@Suite struct FetchFailureTests {
    @Test func aRefusedOrMissingKeyPausesTheStageAndNamesTheVariable() {
        for code in [SourceError.Code.unauthorized(.tmdb), .missingKey(.tmdb)] {
            let error = FetchHandler.stageError(SourceError(code, source: .tmdb, "Invalid API key"), source: .tmdb)
            #expect(error.dependency == "TMDB")
            #expect(error.reason.contains("TMDB_API_KEY"))
            #expect(error.kind == .transient)
        }
        let kakao = FetchHandler.stageError(SourceError(.unauthorized(.kakao), source: .kakao, "wrong appKey"), source: .kakao)
        #expect(kakao.reason.contains("KAKAO_REST_API_KEY"))
        // Open Library takes no key: a refusal names no variable to set.
        let openLibrary = FetchHandler.stageError(SourceError(.unauthorized(.openLibrary), source: .openLibrary, "HTTP 403"), source: .openLibrary)
        #expect(openLibrary.dependency == "Open Library")
        #expect(openLibrary.reason == "HTTP 403")
    }

    @Test func retriableAnswersAreTransientWithTheirWait() {
        let limited = FetchHandler.stageError(
            SourceError(.rateLimited, source: .tmdb, "HTTP 429", status: 429, retryAfter: .seconds(7)), source: .tmdb
        )
        #expect(limited.kind == .transient)
        #expect(limited.minimumWait == .seconds(7))
        #expect(limited.dependency == nil)
        for code in [SourceError.Code.unavailable, .malformed, .quotaExhausted] {
            #expect(FetchHandler.stageError(SourceError(code, source: .kofic, "x"), source: .kofic).kind == .transient)
        }
    }

    @Test func notFoundAndBadRequestArePermanent() {
        for code in [SourceError.Code.notFound, .badRequest] {
            let error = FetchHandler.stageError(SourceError(code, source: .tmdb, "HTTP 404"), source: .tmdb)
            #expect(error.kind == .permanent)
            #expect(error.dependency == nil)
        }
    }
}

@Suite struct DailyBudgetTests {
    /// 2024-01-01 23:59:00 in Korea (UTC+9) = 2024-01-01 14:59:00 UTC.
    static let beforeMidnightKST: Int64 = 1_704_121_140_000

    @Test func takesUntilSpentThenWaitsForMidnightInKorea() {
        let clock = TestClock(Self.beforeMidnightKST)
        let budget = DailyBudget(limit: 2, now: { clock.now })
        #expect(budget.take())
        #expect(budget.take())
        #expect(!budget.take(), "the third call of the day is refused")
        #expect(budget.remaining == 0)
        #expect(budget.untilReset() == .seconds(60))
        clock.now += 60_000  // midnight in Korea
        #expect(budget.remaining == 2)
        #expect(budget.take())
    }

    @Test func theUpstreamCanSayTheQuotaIsSpent() {
        let clock = TestClock(Self.beforeMidnightKST)
        let budget = DailyBudget(limit: 3000, now: { clock.now })
        budget.spend()
        #expect(!budget.take())
        clock.now += 60_000
        #expect(budget.take())
    }
}

import Synchronization

final class TestClock: Sendable {
    private let value: Mutex<Int64>
    init(_ start: Int64) { self.value = Mutex(start) }
    var now: Int64 {
        get { self.value.withLock { $0 } }
        set { self.value.withLock { $0 = newValue } }
    }
}
