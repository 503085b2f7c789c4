import MarqueeCore
public import MarqueeJSON

/// The behaviour controls: accepted keys, rate limits, quota, fault rates and latency.
///
/// Set from flags at start, changed at run time with `POST /_control`, shown (without keys) by `GET /_control`.
public struct EmulatorSettings: Sendable, Equatable {
    /// The default key of every upstream when none is configured.
    public static let defaultKey = "marquee-emulator"
    /// The TMDB user session accepted by default.
    public static let defaultSession = "marquee-session"
    /// The account object id of ``defaultAccessToken``.
    public static let defaultAccountObjectID = "6565a8f1c2d3e4f5a6b7c8d9"
    /// The TMDB v4 user access token accepted by default: a token in TMDB's shape whose subject is
    /// ``defaultAccountObjectID``, the same on every run.
    public static let defaultAccessToken = Self.accessToken(subject: Self.defaultAccountObjectID)

    /// A v4 user access token in TMDB's shape for the account object id `subject`: TMDB's claims (`aud`, `jti`,
    /// `nbf`, `scopes`, `version`) with fixed values and a fixed 32-byte signature, so the same subject gives the
    /// same token on every run.
    ///
    /// The emulator reads only the subject; the signature is no real one.
    public static func accessToken(subject: String) -> String {
        TMDBAccessToken.make(
            subject: subject,
            claims: [
                "aud": .string("3f6c1d2e9a8b7c6d5e4f3a2b1c0d9e8f"),
                "jti": .string("4815162"),
                "nbf": .integer(1_701_158_400),
                "scopes": .array([.string("api_read"), .string("api_write")]),
                "version": .integer(1),
            ],
            signature: (0..<32).map { UInt8(truncatingIfNeeded: 0x5A &+ $0 &* 37) }
        )
    }

    /// TMDB keys accepted as `api_key` or `Authorization: Bearer`.
    public var tmdbKeys: [String] = [Self.defaultKey]
    /// KOFIC keys accepted as `key`.
    public var koficKeys: [String] = [Self.defaultKey]
    /// The TMDB user sessions `/account` accepts, each one account (``Accounts``). Default: `marquee-session`.
    public var tmdbSessions: [String] = [Self.defaultSession]
    /// Sessions revoked: answered TMDB's 401 `status_code` 17 "Session denied.". Default: none.
    public var tmdbRevokedSessions: [String] = []
    /// The TMDB v4 user access tokens the v4 account routes accept as `Authorization: Bearer`, each the account its
    /// subject names (``V4Accounts``). Default: ``defaultAccessToken``.
    public var tmdbAccessTokens: [String] = [Self.defaultAccessToken]
    /// Access tokens revoked: answered TMDB's 401 `status_code` 3 "Authentication failed: You do not have
    /// permissions to access the service.". Default: none.
    public var tmdbRevokedAccessTokens: [String] = []
    /// Kakao REST keys accepted as `Authorization: KakaoAK`.
    public var kakaoKeys: [String] = [Self.defaultKey]
    /// Requests per second per key and upstream (token bucket, burst = rate); 0 = off. Default: 0.
    public var rateLimit: Double = 0
    /// KOFIC calls per key per emulator day; 0 = off. Default: 0.
    public var koficDailyQuota: Int = 0
    /// Length of an emulator day for the KOFIC quota, in seconds. Default: 86400.
    public var quotaDaySeconds: Int = 86400
    /// Share of requests answered 500/502/503. Default: 0.
    public var fault5xx: Double = 0
    /// Share of requests answered 429 with `Retry-After: 1` (as if a rate limit applied). Default: 0.
    public var fault429: Double = 0
    /// Share of requests never answered. Default: 0.
    public var faultTimeout: Double = 0
    /// Share of connections reset (RST) instead of answered. Default: 0.
    public var faultReset: Double = 0
    /// Share of 200 JSON bodies cut or garbled. Default: 0.
    public var faultMalformed: Double = 0
    /// Share of 200 image bodies cut short under a full Content-Length. Default: 0.
    public var faultTruncatedImage: Double = 0
    /// Added delay before every upstream answer, in milliseconds. Default: 0.
    public var latencyMs: Int = 0
    /// A TMDB movie id whose details answer an overview of ``paddedOverviewBytes`` bytes (a record too large for
    /// a topic); 0 = none. Default: 0.
    public var paddedMovie: Int = 0
    /// The length of that overview. Default: 0.
    public var paddedOverviewBytes: Int = 0
    /// The emulated day: TMDB's change feed has no changes after it, and movies changed after the catalogue's
    /// reference day up to it answer changed details. `nil` is the reference day. Default: nil.
    public var today: Day? = nil

    /// Settings with the defaults.
    public init() {}

    /// The settings as JSON, without keys, sessions or access tokens (only how many of each are accepted).
    public var publicJSON: JSON {
        .object([
            ("tmdbKeys", .int(self.tmdbKeys.count)),
            ("koficKeys", .int(self.koficKeys.count)),
            ("kakaoKeys", .int(self.kakaoKeys.count)),
            ("tmdbSessions", .int(self.tmdbSessions.count)),
            ("tmdbRevokedSessions", .int(self.tmdbRevokedSessions.count)),
            ("tmdbAccessTokens", .int(self.tmdbAccessTokens.count)),
            ("tmdbRevokedAccessTokens", .int(self.tmdbRevokedAccessTokens.count)),
            ("rateLimit", .double(self.rateLimit)),
            ("koficDailyQuota", .int(self.koficDailyQuota)),
            ("quotaDaySeconds", .int(self.quotaDaySeconds)),
            ("fault5xx", .double(self.fault5xx)),
            ("fault429", .double(self.fault429)),
            ("faultTimeout", .double(self.faultTimeout)),
            ("faultReset", .double(self.faultReset)),
            ("faultMalformed", .double(self.faultMalformed)),
            ("faultTruncatedImage", .double(self.faultTruncatedImage)),
            ("latencyMs", .int(self.latencyMs)),
            ("paddedMovie", .int(self.paddedMovie)),
            ("paddedOverviewBytes", .int(self.paddedOverviewBytes)),
            ("today", self.today.map { .string($0.iso) } ?? .null),
        ])
    }

    /// Applies a `POST /_control` body: any subset of the fields above, keys as a string or an array of
    /// strings (`tmdbKey`/`tmdbKeys`, `koficKey`/`koficKeys`, `kakaoKey`/`kakaoKeys`, `tmdbSession`/`tmdbSessions`,
    /// `tmdbRevokedSession`/`tmdbRevokedSessions`, `tmdbAccessToken`/`tmdbAccessTokens`,
    /// `tmdbRevokedAccessToken`/`tmdbRevokedAccessTokens`). The actions
    /// `resetQuota`, `resetRateLimits`, `outage` and `changeImages` are left to the caller.
    ///
    /// - Throws: ``ControlError`` naming the first field with a wrong type or value; nothing is changed then.
    public mutating func apply(_ object: JSONObject) throws(ControlError) {
        var next = self
        for (name, value) in object {
            switch name {
            case "tmdbKey", "tmdbKeys": next.tmdbKeys = try Self.keys(name, value)
            case "koficKey", "koficKeys": next.koficKeys = try Self.keys(name, value)
            case "kakaoKey", "kakaoKeys": next.kakaoKeys = try Self.keys(name, value)
            case "tmdbSession", "tmdbSessions": next.tmdbSessions = try Self.keys(name, value)
            case "tmdbRevokedSession", "tmdbRevokedSessions": next.tmdbRevokedSessions = try Self.keys(name, value)
            case "tmdbAccessToken", "tmdbAccessTokens": next.tmdbAccessTokens = try Self.keys(name, value)
            case "tmdbRevokedAccessToken", "tmdbRevokedAccessTokens":
                next.tmdbRevokedAccessTokens = try Self.keys(name, value)
            case "rateLimit": next.rateLimit = try Self.number(name, value, 0...1_000_000)
            case "koficDailyQuota": next.koficDailyQuota = Int(try Self.number(name, value, 0...1_000_000_000))
            case "quotaDaySeconds": next.quotaDaySeconds = Int(try Self.number(name, value, 1...1_000_000_000))
            case "fault5xx": next.fault5xx = try Self.number(name, value, 0...1)
            case "fault429": next.fault429 = try Self.number(name, value, 0...1)
            case "faultTimeout": next.faultTimeout = try Self.number(name, value, 0...1)
            case "faultReset": next.faultReset = try Self.number(name, value, 0...1)
            case "faultMalformed": next.faultMalformed = try Self.number(name, value, 0...1)
            case "faultTruncatedImage": next.faultTruncatedImage = try Self.number(name, value, 0...1)
            case "latencyMs": next.latencyMs = Int(try Self.number(name, value, 0...600_000))
            case "paddedMovie": next.paddedMovie = Int(try Self.number(name, value, 0...1_000_000_000))
            case "paddedOverviewBytes": next.paddedOverviewBytes = Int(try Self.number(name, value, 0...100_000_000))
            case "today":
                if value == .null {
                    next.today = nil
                } else {
                    guard case .string(let text) = value, text.utf8.count == 10, let day = Day(parsing: text) else {
                        throw ControlError(reason: "today must be a day as YYYY-MM-DD, or null")
                    }
                    next.today = day
                }
            case "resetQuota", "resetRateLimits", "outage", "changeImages": continue  // actions, handled by the state
            default: throw ControlError(reason: "unknown field \(name)")
            }
        }
        guard next.fault5xx + next.fault429 + next.faultTimeout + next.faultReset <= 1 else {
            throw ControlError(reason: "fault5xx + fault429 + faultTimeout + faultReset must not exceed 1")
        }
        self = next
    }

    private static func keys(_ name: String, _ value: JSONValue) throws(ControlError) -> [String] {
        guard let keys = value.strings else {
            throw ControlError(reason: "\(name) must be a string or an array of strings")
        }
        return keys
    }

    private static func number(
        _ name: String,
        _ value: JSONValue,
        _ range: ClosedRange<Double>
    ) throws(ControlError)
        -> Double
    {
        guard let number = value.number, range.contains(number) else {
            throw ControlError(reason: "\(name) must be a number in \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }
}

/// A rejected `POST /_control` body.
public struct ControlError: Error, CustomStringConvertible {
    /// What is wrong.
    public let reason: String

    public var description: String { self.reason }
}
