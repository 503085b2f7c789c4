import Foundation
import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

@Suite struct SourceConfigurationTests {
    @Test func defaultsFollowTheDesign() throws {
        let configuration = try SourceConfiguration.fromEnvironment([:])
        #expect(configuration.tmdbBaseURL == "https://api.themoviedb.org/3")
        #expect(configuration.tmdbImageBaseURL == "https://image.tmdb.org/t/p")
        #expect(configuration.koficBaseURL == "https://www.kobis.or.kr/kobisopenapi/webservice/rest")
        #expect(configuration.kakaoBaseURL == "https://dapi.kakao.com")
        #expect(configuration.openLibraryBaseURL == "https://openlibrary.org")
        #expect(configuration.openLibraryCoversBaseURL == "https://covers.openlibrary.org")
        #expect(configuration.tmdbAPIKey == nil)
        #expect(configuration.koficAPIKey == nil)
        #expect(configuration.kakaoAPIKey == nil)
        #expect(configuration.userAgent.hasPrefix("marquee/"))
    }

    @Test func readsKeysAndBaseURLs() throws {
        let configuration = try SourceConfiguration.fromEnvironment([
            "TMDB_API_KEY": "  t-key\n", "KOFIC_API_KEY": "k-key", "KAKAO_REST_API_KEY": "a-key",
            "TMDB_BASE_URL": "http://upstream:8080/3/", "TMDB_IMAGE_BASE_URL": "http://upstream:8080/t/p//",
            "KOFIC_BASE_URL": "http://upstream:8080/kofic", "KAKAO_BASE_URL": "https://upstream",
            "OPENLIBRARY_BASE_URL": "http://upstream:8080/ol/",
            "OPENLIBRARY_COVERS_BASE_URL": "http://upstream:8080/covers",
            "MARQUEE_USER_AGENT": "marquee-test/1 (ops@example.org)",
        ])
        #expect(configuration.tmdbAPIKey?.revealed == "t-key")
        #expect(configuration.koficAPIKey?.revealed == "k-key")
        #expect(configuration.kakaoAPIKey?.revealed == "a-key")
        #expect(configuration.tmdbBaseURL == "http://upstream:8080/3")
        #expect(configuration.tmdbImageBaseURL == "http://upstream:8080/t/p")
        #expect(configuration.openLibraryBaseURL == "http://upstream:8080/ol")
        #expect(configuration.userAgent == "marquee-test/1 (ops@example.org)")
    }

    @Test func readsKeysFromFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-sources-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("tmdb")
        try Data("file-key-123\n".utf8).write(to: keyFile)
        let configuration = try SourceConfiguration.fromEnvironment(["TMDB_API_KEY_FILE": keyFile.path])
        #expect(configuration.tmdbAPIKey?.revealed == "file-key-123")

        let empty = directory.appendingPathComponent("empty")
        try Data(" \n".utf8).write(to: empty)
        #expect(Self.error(["KOFIC_API_KEY_FILE": empty.path])?.reason.contains("KOFIC_API_KEY_FILE") == true)
        let missing = Self.error(["KAKAO_REST_API_KEY_FILE": directory.appendingPathComponent("nope").path])
        #expect(missing?.code == .invalidConfiguration)
        #expect(Self.error(["TMDB_API_KEY": "a", "TMDB_API_KEY_FILE": keyFile.path])?.code == .invalidConfiguration)
    }

    @Test func refusesBadBaseURLs() throws {
        for url in [
            "ftp://x", "upstream:8080", "http://", "https://user:pw@host/3", "http://host/3?x=1", "http://ho st",
        ] {
            let error = try #require(Self.error(["TMDB_BASE_URL": url]), "\(url)")
            #expect(error.code == .invalidConfiguration)
            #expect(error.reason.contains("tmdbBaseURL"))
        }
    }

    @Test func errorsNeverShowAKey() throws {
        let error = try #require(Self.error(["TMDB_API_KEY": "very-secret", "TMDB_API_KEY_FILE": "/x"]))
        #expect(!error.description.contains("very-secret"))
    }

    static func error(_ environment: [String: String]) -> SourceError? {
        do {
            _ = try SourceConfiguration.fromEnvironment(environment)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsOneSessionUnderItsLabelAndSeveralFromPairs() throws {
        let one = try SourceConfiguration.fromEnvironment(["TMDB_SESSION_ID": " s-one-111\n"])
        #expect(one.tmdbSessions == ["default": Secret("s-one-111")])
        let labelled = try SourceConfiguration.fromEnvironment([
            "TMDB_SESSION_ID": "s-one-111", "TMDB_ACCOUNT": "me",
            "TMDB_SESSIONS": "family=s-two-222,\n kids = s-three-333\n",
        ])
        #expect(
            labelled.tmdbSessions
                == ["me": Secret("s-one-111"), "family": Secret("s-two-222"), "kids": Secret("s-three-333")]
        )
        // The sessions are scrubbed from upstream messages like the keys.
        #expect(labelled.secrets.contains(Secret("s-two-222")))
    }

    @Test func badSessionSettingsAreRefusedWithoutTheSession() throws {
        let cases: [[String: String]] = [
            ["TMDB_SESSIONS": "family"],
            ["TMDB_SESSIONS": "Family=s-secret-1"],
            ["TMDB_SESSIONS": "family=s-secret-1,family=s-secret-2"],
            ["TMDB_SESSIONS": "family=s secret"],
            ["TMDB_SESSION_ID": "s-secret-1", "TMDB_ACCOUNT": "bad label"],
            ["TMDB_SESSION_ID": "s-secret-1", "TMDB_SESSIONS": "default=s-secret-2"],
        ]
        for environment in cases {
            let error = try #require(Self.error(environment), "\(environment)")
            #expect(error.code == .invalidConfiguration)
            #expect(!error.description.contains("s-secret"), "\(error)")
            #expect(!error.description.contains("s secret"), "\(error)")
        }
    }

    static func token(_ subject: String) -> String {
        TMDBAccessToken.make(
            subject: subject,
            claims: ["aud": .string("t-secret-aud")],
            signature: Array("t-secret".utf8)
        )
    }

    @Test func readsOneAccessTokenUnderItsLabelAndSeveralFromPairsBesideTheSessions() throws {
        let (one, two) = (Self.token("aaaa1111"), Self.token("bbbb2222"))
        let single = try SourceConfiguration.fromEnvironment(["TMDB_ACCESS_TOKEN": " \(one)\n"])
        #expect(single.tmdbAccessTokens == ["default": Secret(one)])
        #expect(single.tmdbSessions.isEmpty)
        #expect(single.tmdbV4URL == "https://api.themoviedb.org/4")
        let mixed = try SourceConfiguration.fromEnvironment([
            "TMDB_ACCESS_TOKEN": one, "TMDB_ACCOUNT": "me", "TMDB_ACCESS_TOKENS": "kids=\(two)",
            "TMDB_SESSIONS": "family=s-two-222", "TMDB_BASE_URL": "http://127.0.0.1:9/tmdb/3/",
        ])
        #expect(mixed.tmdbAccessTokens == ["me": Secret(one), "kids": Secret(two)])
        #expect(mixed.tmdbAccountLabels == ["family", "kids", "me"])
        #expect(mixed.tmdbAccountSecret("kids") == Secret(two))
        #expect(mixed.tmdbAccountSecret("family") == Secret("s-two-222"))
        #expect(mixed.tmdbV4URL == "http://127.0.0.1:9/tmdb/4")
        #expect(mixed.secrets.contains(Secret(two)))
        let own = try SourceConfiguration.fromEnvironment([
            "TMDB_ACCESS_TOKEN": one, "TMDB_BASE_URL": "http://proxy:1/tmdb", "TMDB_V4_BASE_URL": "http://proxy:1/v4/",
        ])
        #expect(own.tmdbV4URL == "http://proxy:1/v4")
    }

    @Test func badAccessTokenSettingsAreRefusedWithoutTheToken() throws {
        let token = Self.token("aaaa1111")
        let cases: [[String: String]] = [
            ["TMDB_ACCESS_TOKEN": "t-secret-not-a-jwt"],
            ["TMDB_ACCESS_TOKENS": "family=t-secret-not-a-jwt"],
            ["TMDB_ACCESS_TOKENS": "family"],
            ["TMDB_ACCESS_TOKENS": "family=\(token),family=\(token)"],
            ["TMDB_ACCESS_TOKEN": token, "TMDB_SESSION_ID": "s-secret-1"],
            ["TMDB_ACCESS_TOKEN": token, "TMDB_SESSIONS": "default=s-secret-1"],
            ["TMDB_ACCESS_TOKENS": "family=\(token)", "TMDB_SESSIONS": "family=s-secret-1"],
            ["TMDB_SESSION_ID": "s-secret-1", "TMDB_ACCESS_TOKENS": "default=\(token)"],
            ["TMDB_ACCESS_TOKEN": token, "TMDB_BASE_URL": "http://proxy:1/tmdb"],
            ["TMDB_ACCESS_TOKEN": token, "TMDB_V4_BASE_URL": "ftp://proxy/v4"],
        ]
        for environment in cases {
            let error = try #require(Self.error(environment), "\(environment)")
            #expect(error.code == .invalidConfiguration)
            #expect(!error.description.contains("secret"), "\(error)")
            #expect(!error.description.contains(token), "\(error)")
        }
    }
}
