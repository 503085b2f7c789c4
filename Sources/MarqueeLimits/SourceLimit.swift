import Crypto
public import MarqueeCore
import MarqueeStore

/// One upstream source's limits, as a worker is configured with them.
public struct SourceLimit: Sendable {
    /// The source's name (`tmdb`, `kofic`, …): what the worker asks about.
    public var source: String
    /// The name in log lines (`TMDB`).
    public var displayName: String
    /// The key's fingerprint (``fingerprint(ofKey:)``): workers with the same key share one limit.
    public var keyID: String
    /// The upstream's `host:port`: the same key against another upstream (an emulator) is another limit.
    public var host: String
    /// Requests per second for the whole pipeline; `nil` for no rate limit.
    public var rate: Double?
    /// Calls per day for the whole pipeline (a KOFIC key's quota); `nil` for none.
    public var dailyBudget: Int?
    /// The upstream's offset from UTC, for the day of the budget (KOFIC: +9 h, midnight in Korea).
    public var budgetUTCOffset: Duration

    /// - Parameter key: The source's key (kept only as its fingerprint); `nil` for a source without one.
    public init(
        source: String,
        displayName: String,
        key: String?,
        host: String,
        rate: Double?,
        dailyBudget: Int? = nil,
        budgetUTCOffset: Duration = .seconds(9 * 3600)
    ) {
        self.source = source
        self.displayName = displayName
        self.keyID = Self.fingerprint(ofKey: key)
        self.host = host
        self.rate = rate
        self.dailyBudget = dailyBudget
        self.budgetUTCOffset = budgetUTCOffset
    }

    /// `source:keyID@host`: the limit's name in the store, and the budget's.
    public var id: String { "\(self.source):\(self.keyID)@\(self.host)" }

    /// The share of the limit the schedule keeps: 3 % below it, so that the jitter between a request's slot and
    /// its arrival upstream (a loaded machine's threads, the network) stays within the upstream's limit.
    public static let pace = 0.97

    var shared: Store.SharedLimit {
        let rate = self.rate ?? 0
        return Store.SharedLimit(
            id: self.id,
            source: self.source,
            keyID: self.keyID,
            host: self.host,
            rate: rate,
            pace: rate * Self.pace
        )
    }

    /// `key-` and the first 8 hex digits of the key's SHA-256 (`anonymous` without a key): it tells keys apart in
    /// `marquee sources` and the store, and gives nothing of the key away.
    public static func fingerprint(ofKey key: String?) -> String {
        guard let key, !key.isEmpty else { return "anonymous" }
        let digest = SHA256.hash(data: Array(key.utf8))
        return "key-"
            + digest.prefix(4).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
    }

    /// The budget's day (`YYYY-MM-DD` in the upstream's calendar) at `microseconds` since the epoch, and when it
    /// ends (the next midnight there, in microseconds since the epoch).
    func budgetDay(at microseconds: Int64) -> (day: String, resetAt: Int64) {
        let offset = MarqueeLimits.microseconds(self.budgetUTCOffset)
        let days = (microseconds + offset).floorDivided(by: 86_400_000_000)
        let resetAt = (days + 1) * 86_400_000_000 - offset
        return (LocalDate(dayNumber: days).description, resetAt)
    }
}

/// A source is paused, or its budget spent: the job waits (in a retry tier, spending no attempt) and runs again
/// after `wait`.
public struct SourceHeld: RetriableError, Sendable {
    public var source: String
    /// Why, for the job's error header and logs (never a secret).
    public var reason: String
    /// How long until the job may try again.
    public var wait: Duration

    public init(source: String, reason: String, wait: Duration) {
        self.source = source
        self.reason = reason
        self.wait = wait
    }

    public var description: String { self.reason }
    /// Whether the job may succeed later: yes, once the source is released.
    public var isRetriable: Bool { true }
}

extension SourceLimit {
    /// `host:port` of a URL (`https://api.themoviedb.org/3` → `api.themoviedb.org:443`), lowercased; the text
    /// itself when it is no URL.
    public static func hostAndPort(ofURL url: String) -> String {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return url }
        let scheme = parts[0].lowercased()
        var authority = parts[1].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let text = authority.lowercased()
        let hasPort = text.hasPrefix("[") ? text.contains("]:") : text.contains(":")
        return hasPort ? text : text + (scheme == "https" ? ":443" : ":80")
    }
}

extension SourceLimitsConfiguration {
    /// This machine's name (`gethostname`).
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "unknown" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// A member name unique to this process: `stage/host/pid/` and four random hex digits.
    public static func memberName(stage: String) -> String {
        "\(stage)/\(Self.hostName)/\(getpid())/\(String(UInt16.random(in: 0...UInt16.max), radix: 16))"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
