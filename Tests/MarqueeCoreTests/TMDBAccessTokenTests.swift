import MarqueeCore
import MarqueeJSON
import Testing

/// Reading the account object id out of a TMDB v4 user access token, and refusing what is not one.
@Suite struct TMDBAccessTokenTests {
    /// A token as TMDB issues one (its claims, a 32-byte signature).
    static let token = TMDBAccessToken.make(
        subject: "5b8f7e2c0e0a2656f0008e3a",
        claims: [
            "aud": .string("0123456789abcdef0123456789abcdef"), "jti": .string("4187219"),
            "nbf": .integer(1_709_294_400), "scopes": .array([.string("api_read"), .string("api_write")]),
            "version": .integer(1),
        ],
        signature: Array(0..<32)
    )

    @Test func theSubjectIsTheAccountObjectID() {
        #expect(TMDBAccessToken.accountObjectID(in: Self.token) == "5b8f7e2c0e0a2656f0008e3a")
        #expect(Self.token.split(separator: ".").count == 3)
        #expect(!Self.token.contains("="))
    }

    /// A token TMDB wrote (header, payload and signature of the form TMDB's documentation shows), read as sent.
    @Test func aTokenWrittenElsewhereIsRead() {
        let header = "eyJhbGciOiJIUzI1NiJ9"  // {"alg":"HS256"}
        // {"aud":"abc","sub":"5f2d1c3b4a5e6f7a8b9c0d1e","scopes":["api_read","api_write"],"version":1}
        let payload =
            "eyJhdWQiOiJhYmMiLCJzdWIiOiI1ZjJkMWMzYjRhNWU2ZjdhOGI5YzBkMWUiLCJzY29wZXMiOlsiYXBpX3JlYWQiLCJhcGlfd3JpdGUiXSwidmVyc2lvbiI6MX0"
        #expect(TMDBAccessToken.accountObjectID(in: "\(header).\(payload).c2lnbmF0dXJl") == "5f2d1c3b4a5e6f7a8b9c0d1e")
        #expect(
            TMDBAccessToken.accountObjectID(in: "\(header).\(payload)==.c2lnbmF0dXJl") == "5f2d1c3b4a5e6f7a8b9c0d1e"
        )
    }

    @Test func whatIsNotATokenNamesNoAccount() {
        let parts = Self.token.split(separator: ".").map(String.init)
        let numberSubject = "\(parts[0]).eyJzdWIiOjd9.\(parts[2])"  // {"sub":7}
        let cases = [
            "", "a-session-id", "\(parts[0]).\(parts[1])", "\(parts[0]).\(parts[1]).", ".\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2]).x", "\(parts[0]).!!!.\(parts[2])", "\(parts[0]).e30.\(parts[2])",
            "\(parts[0]).bm90IGpzb24.\(parts[2])", numberSubject,
            TMDBAccessToken.make(subject: "../movie", signature: [1]),
            TMDBAccessToken.make(subject: String(repeating: "a", count: 65), signature: [1]),
            TMDBAccessToken.make(subject: "", signature: [1]),
        ]
        for token in cases {
            #expect(TMDBAccessToken.accountObjectID(in: token) == nil, "\(token)")
        }
        #expect(
            TMDBAccessToken.accountObjectID(in: TMDBAccessToken.make(subject: "AZaz09", signature: [1])) == "AZaz09"
        )
    }
}
