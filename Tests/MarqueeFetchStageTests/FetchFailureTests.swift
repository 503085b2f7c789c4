import MarqueeCore
import MarqueeFetchStage
import MarqueePipeline
import MarqueeSources
import Testing

@Suite struct FetchFailureTests {
    @Test func aRefusedOrMissingKeyHoldsTheJobAndNamesTheVariable() {
        for code in [SourceError.Code.unauthorized(.tmdb), .missingKey(.tmdb)] {
            let error = FetchHandler.stageError(SourceError(code, source: .tmdb, "Invalid API key"), source: .tmdb)
            #expect(error.hold == .seconds(60), "the job waits without spending an attempt; the other sources go on")
            #expect(error.dependency == nil, "the stage itself does not pause")
            #expect(error.reason.contains("TMDB_API_KEY"))
            #expect(error.kind == .transient)
        }
        let kakao = FetchHandler.stageError(
            SourceError(.unauthorized(.kakao), source: .kakao, "wrong appKey"),
            source: .kakao
        )
        #expect(kakao.reason.contains("KAKAO_REST_API_KEY"))
        // Open Library takes no key: a refusal names no variable to set.
        let openLibrary = FetchHandler.stageError(
            SourceError(.unauthorized(.openLibrary), source: .openLibrary, "HTTP 403"),
            source: .openLibrary
        )
        #expect(openLibrary.hold != nil)
        #expect(openLibrary.reason == "HTTP 403")
    }

    @Test func retriableAnswersAreTransientWithTheirWait() {
        let limited = FetchHandler.stageError(
            SourceError(.rateLimited, source: .tmdb, "HTTP 429", status: 429, retryAfter: .seconds(7)),
            source: .tmdb
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
