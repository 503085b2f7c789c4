import MarqueeCore
import MarqueeHTTP
import MarqueeLimits
import MarqueePipeline
import MarqueeSources
import Testing

@testable import MarqueeFetchStage

/// Each signed-in TMDB account is a limit of its own, so a refused session holds that account's jobs alone.
@Suite struct AccountLimitTests {
    static func settings(_ sessions: [String: String]) -> FetchWorkerSettings {
        var sources = SourceConfiguration()
        sources.tmdbAPIKey = Secret("tmdb-key")
        sources.tmdbSessions = sessions.mapValues { Secret($0) }
        return FetchWorkerSettings(sources: sources, http: HTTPFetcherConfiguration())
    }

    @Test func eachAccountIsALimitWithoutARateKeyedByItsSessionsFingerprint() {
        let limits = FetchWorker.sourceLimits(Self.settings(["family": "session-one", "default": "session-two"]))
        let accounts = limits.filter { $0.source.hasPrefix("tmdb.account.") }
        #expect(accounts.map(\.source) == ["tmdb.account.default", "tmdb.account.family"])
        #expect(accounts.map(\.displayName) == ["TMDB account default", "TMDB account family"])
        #expect(accounts.allSatisfy { $0.rate == nil && $0.dailyBudget == nil })
        #expect(accounts.first?.keyID == SourceLimit.fingerprint(ofKey: "session-two"))
        #expect(accounts.allSatisfy { !$0.id.contains("session-") })
        // A new session for the label is another limit (it starts unpaused).
        let renewed = FetchWorker.sourceLimits(Self.settings(["default": "session-three"]))
        #expect(renewed.first { $0.source == "tmdb.account.default" }?.id != accounts.first?.id)
        // The sources are all still there.
        #expect(Set(limits.map(\.source)).isSuperset(of: Source.allCases.map(\.rawValue)))
    }

    @Test func aRefusedSessionHoldsTheJobAMinuteAtATime() {
        let error = FetchHandler.stageError(
            SourceError(.sessionRefused, source: .tmdb, "Session denied. (status_code 17)", status: 401),
            source: .tmdb
        )
        #expect(error.hold == .seconds(60))
        #expect(error.kind == .transient, "held, never dead-lettered")
        #expect(error.reason == "Session denied. (status_code 17)")
        #expect(FetchHandler.accountLimit("family") == "tmdb.account.family")
    }

    @Test func anAccessTokenAccountIsALimitToo() {
        var settings = Self.settings(["default": "session-two"])
        let token = TMDBAccessToken.make(subject: "abc123", signature: Array("token-sig".utf8))
        settings.sources.tmdbAccessTokens = ["kids": Secret(token)]
        settings.sources.tmdbV4BaseURL = "http://127.0.0.1:8088/tmdb/4"
        let accounts = FetchWorker.sourceLimits(settings).filter { $0.source.hasPrefix("tmdb.account.") }
        #expect(accounts.map(\.source) == ["tmdb.account.default", "tmdb.account.kids"])
        let kids = accounts[1]
        #expect(kids.keyID == SourceLimit.fingerprint(ofKey: token))
        #expect(kids.host == "127.0.0.1:8088")
        #expect(!kids.id.contains(token))
    }
}
