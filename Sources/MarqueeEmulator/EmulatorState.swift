import DequeModule
import MarqueeJSON
import NIOCore
import Synchronization

/// The upstreams the emulator serves, as named in stats and rate limits.
public enum Upstream: String, Sendable, CaseIterable {
    case tmdb
    case tmdbImages = "tmdb-images"
    case kofic
    case kakao
    case kakaoImages = "kakao-images"
    case openlibrary
    case covers
    /// `/_stats`, `/_control` and unknown paths.
    case emulator
}

/// The injected fault kinds, as named in `/_stats`.
public enum FaultKind: String, Sendable, CaseIterable {
    case http5xx = "5xx"
    case http429 = "429"
    case timeout
    case reset
    case malformed
    case truncatedImage
}

/// Mutable state shared by all connections: settings, rate-limit buckets, quota counters and statistics.
///
/// One lock; every method is short and never blocks inside it.
final class EmulatorState: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: UInt64
    }

    /// When one upstream's requests arrived: how many, the first and the last (uptime nanoseconds).
    struct Timing {
        var requests: Int
        var first: UInt64
        var last: UInt64

        init(at now: UInt64) {
            self.requests = 0
            self.first = now
            self.last = now
        }

        mutating func record(_ now: UInt64) {
            self.requests += 1
            self.last = now
        }
    }

    struct Counters {
        var requests = 0
        var routes: [String: Int] = [:]
        var statuses: [String: Int] = [:]
        var routeStatuses: [String: [String: Int]] = [:]
        var faults: [String: Int] = [:]
        var notModified = 0
        var rateLimited: [String: Int] = [:]
        var quotaExceeded = 0
        var windows: [String: Deque<UInt64>] = [:]
        var maxPerSecond: [String: [String: Int]] = [:]
        /// Requests answered 503 because their upstream was in an outage, per upstream.
        var outages: [String: Int] = [:]
        /// Arrivals per upstream, for benchmarks: the achieved rate is `(requests - 1) / (last - first)`.
        var timing: [String: Timing] = [:]
        /// What the image upstreams sent, per upstream.
        var images: [String: ImageCounts] = [:]
    }

    /// One image upstream's answers: `200`s and the body bytes they sent (cut short by a truncation fault
    /// included as sent), and `304`s (no body).
    struct ImageCounts {
        var sent = 0
        var bytes = 0
        var notModified = 0
    }

    struct State {
        var settings: EmulatorSettings
        var buckets: [String: Bucket] = [:]
        var quota: [String: (day: Int, calls: Int)] = [:]
        /// Files uploaded with `PUT /_files/<name>`: bytes and content type.
        var files: [String: (bytes: [UInt8], contentType: String)] = [:]
        var counters = Counters()
        var requestNumber: UInt64 = 0
        /// The outage set with `POST /_control`, until it ends (cleared lazily once its deadline passed).
        var outage: UpstreamOutage?
        /// The images changed upstream with `POST /_control {"changeImages": …}`.
        var imageRevisions = ImageRevisions()
    }

    private let state: Mutex<State>
    private let start: UInt64

    init(settings: EmulatorSettings) {
        self.state = Mutex(State(settings: settings))
        self.start = Self.now()
    }

    static func now() -> UInt64 { DispatchClock.uptimeNanoseconds() }

    var settings: EmulatorSettings { self.state.withLock { $0.settings } }

    /// Keeps an uploaded file (at most 64 of them: the oldest names are not tracked, so the store is bounded).
    func putFile(_ name: String, bytes: [UInt8], contentType: String) {
        self.state.withLock { state in
            if state.files.count >= 64, state.files[name] == nil, let any = state.files.keys.first {
                state.files[any] = nil
            }
            state.files[name] = (bytes, contentType)
        }
    }

    func file(_ name: String) -> (bytes: [UInt8], contentType: String)? { self.state.withLock { $0.files[name] } }

    /// Applies a control body and returns `GET /_control`'s view after it; `resetQuota`/`resetRateLimits` also
    /// clear those counters, `outage` starts or ends an outage.
    ///
    /// - Throws: ``ControlError`` for a bad field; nothing is changed then.
    func control(_ object: JSONObject) throws(ControlError) -> JSON {
        // Read before the settings change, so a bad outage leaves the settings as they were.
        let change = try object["outage"].map { value throws(ControlError) in try UpstreamOutage.change(value) }
        let changedImages = try object["changeImages"].map { value throws(ControlError) in
            try ImageRevisions.names(value)
        }
        return try self.state.withLock { state throws(ControlError) in
            try state.settings.apply(object)
            if object["resetQuota"] == .bool(true) { state.quota = [:] }
            if object["resetRateLimits"] == .bool(true) { state.buckets = [:] }
            let now = Self.now()
            switch change {
            case .start(let upstream, let seconds)?:
                state.outage = UpstreamOutage(upstream: upstream, until: now + UInt64(seconds * 1e9))
            case .end?:
                state.outage = nil
            case nil:
                break
            }
            if let changedImages { state.imageRevisions.change(changedImages) }
            return Self.controlJSON(&state, now: now)
        }
    }

    /// `GET /_control`: the settings without keys, and the outage (`null` when there is none).
    func controlJSON() -> JSON {
        self.state.withLock { state in Self.controlJSON(&state, now: Self.now()) }
    }

    private static func controlJSON(_ state: inout State, now: UInt64) -> JSON {
        if let outage = state.outage, outage.until <= now { state.outage = nil }
        guard case .object(var members) = state.settings.publicJSON else { return state.settings.publicJSON }
        members.append(("outage", state.outage?.json(at: now) ?? .null))
        members.append(("changedImages", state.imageRevisions.json))
        return .object(members)
    }

    /// The revision of the image named `name` (``ImageRevisions``): 0 until `changeImages` names it.
    func imageRevision(_ name: String) -> Int { self.state.withLock { $0.imageRevisions.revision(of: name) } }

    /// Counts an image answer of `upstream`: a `200` and the body bytes sent, or a `304`.
    func imageAnswered(_ upstream: Upstream, status: Int, bodyBytes: Int) {
        self.state.withLock { state in
            switch status {
            case 200:
                state.counters.images[upstream.rawValue, default: ImageCounts()].sent += 1
                state.counters.images[upstream.rawValue, default: ImageCounts()].bytes += bodyBytes
            case 304:
                state.counters.images[upstream.rawValue, default: ImageCounts()].notModified += 1
            default:
                break
            }
        }
    }

    /// Whether `upstream` is in an outage now; when it is, counts the request as answered by the outage.
    func isInOutage(_ upstream: Upstream) -> Bool {
        self.state.withLock { state in
            guard let outage = state.outage else { return false }
            let now = Self.now()
            guard outage.covers(upstream, at: now) else {
                if outage.until <= now { state.outage = nil }
                return false
            }
            state.counters.outages[upstream.rawValue, default: 0] += 1
            return true
        }
    }

    /// Counts an arriving request and returns its sequence number (for the fault draws).
    func arrived(route: String, upstream: Upstream, key: String) -> UInt64 {
        self.state.withLock { state in
            // Read under the lock, so each window's times are in order (two threads reading the clock before
            // the lock could append a later time first, and `now - first` would underflow).
            let now = Self.now()
            state.requestNumber += 1
            state.counters.requests += 1
            state.counters.routes[route, default: 0] += 1
            guard upstream != .emulator else { return state.requestNumber }
            state.counters.timing[upstream.rawValue, default: Timing(at: now)].record(now)
            let windowKey = upstream.rawValue + "\u{0}" + key
            var window = state.counters.windows[windowKey] ?? Deque()
            window.append(now)
            while let first = window.first, now - first >= 1_000_000_000 { window.removeFirst() }
            state.counters.windows[windowKey] = window
            let previous = state.counters.maxPerSecond[upstream.rawValue]?[key] ?? 0
            if window.count > previous {
                state.counters.maxPerSecond[upstream.rawValue, default: [:]][key] = window.count
            }
            return state.requestNumber
        }
    }

    /// Records the status a request was answered with.
    func answered(route: String, status: Int) {
        self.state.withLock { state in
            let code = String(status)
            state.counters.statuses[code, default: 0] += 1
            state.counters.routeStatuses[route, default: [:]][code, default: 0] += 1
            if status == 304 { state.counters.notModified += 1 }
        }
    }

    func fault(_ kind: FaultKind) {
        self.state.withLock { $0.counters.faults[kind.rawValue, default: 0] += 1 }
    }

    /// Takes a token from the key's bucket; returns the seconds to wait when there is none.
    func takeToken(upstream: Upstream, key: String) -> Int? {
        self.state.withLock { state -> Int? in
            let now = Self.now()  // under the lock: `updated` only moves forward
            let rate = state.settings.rateLimit
            guard rate > 0 else { return nil }
            let bucketKey = upstream.rawValue + "\u{0}" + key
            var bucket = state.buckets[bucketKey] ?? Bucket(tokens: rate, updated: now)
            bucket.tokens = min(rate, bucket.tokens + Double(now - bucket.updated) / 1e9 * rate)
            bucket.updated = now
            defer { state.buckets[bucketKey] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            state.counters.rateLimited[upstream.rawValue, default: 0] += 1
            return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
        }
    }

    /// Counts a KOFIC call against the key's daily quota; false when the quota is spent.
    func takeKoficCall(key: String) -> Bool {
        let now = Self.now()
        return self.state.withLock { state in
            let quota = state.settings.koficDailyQuota
            guard quota > 0 else { return true }
            let day = Int((now - self.start) / 1_000_000_000) / max(1, state.settings.quotaDaySeconds)
            var entry = state.quota[key] ?? (day, 0)
            if entry.day != day { entry = (day, 0) }
            entry.calls += 1
            state.quota[key] = entry
            if entry.calls > quota {
                state.counters.quotaExceeded += 1
                return false
            }
            return true
        }
    }

    /// `GET /_stats`.
    func statsJSON() -> JSON {
        self.state.withLock { state in
            let counters = state.counters
            func counts(_ dictionary: [String: Int]) -> JSON {
                .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
            }
            var faults = counters.faults
            for kind in FaultKind.allCases where faults[kind.rawValue] == nil { faults[kind.rawValue] = 0 }
            var timing: [(String, JSON)] = []
            for (upstream, arrivals) in counters.timing.sorted(by: { $0.key < $1.key }) {
                let members: [(String, JSON)] = [
                    ("requests", .int(arrivals.requests)),
                    ("first", .double(self.seconds(arrivals.first))),
                    ("last", .double(self.seconds(arrivals.last))),
                ]
                timing.append((upstream, .object(members)))
            }
            return .object([
                ("requests", .int(counters.requests)),
                ("routes", counts(counters.routes)),
                ("statuses", counts(counters.statuses)),
                (
                    "routeStatuses",
                    .object(counters.routeStatuses.sorted { $0.key < $1.key }.map { ($0.key, counts($0.value)) })
                ),
                ("faults", counts(faults)),
                ("notModified", .int(counters.notModified)),
                ("rateLimited", counts(counters.rateLimited)),
                ("koficQuotaExceeded", .int(counters.quotaExceeded)),
                (
                    "maxRequestsPerSecond",
                    .object(counters.maxPerSecond.sorted { $0.key < $1.key }.map { ($0.key, counts($0.value)) })
                ),
                (
                    "maxRequestsPerSecondByUpstream",
                    counts(counters.maxPerSecond.mapValues { $0.values.max() ?? 0 })
                ),
                ("outage", counts(counters.outages)),
                ("timing", .object(timing)),
                (
                    "images",
                    .object(
                        counters.images.sorted { $0.key < $1.key }.map { entry in
                            (
                                entry.key,
                                .object([
                                    ("sent", .int(entry.value.sent)), ("bytes", .int(entry.value.bytes)),
                                    ("notModified", .int(entry.value.notModified)),
                                ])
                            )
                        }
                    )
                ),
            ])
        }
    }

    /// Seconds from the emulator's start to `uptime` (nanoseconds), to the microsecond.
    private func seconds(_ uptime: UInt64) -> Double {
        Double((uptime - min(uptime, self.start)) / 1000) / 1_000_000
    }

    /// `POST /_stats/reset`: counters (timing included) only; settings, buckets, quotas and an outage stay.
    func resetStats() {
        self.state.withLock { $0.counters = Counters() }
    }
}

/// A short, non-reversible name for a key in stats (`key-1a2b3c4d`); `anonymous` for keyless upstreams.
public enum KeyFingerprint {
    /// The fingerprint of `key`.
    public static func of(_ key: String) -> String {
        key == "anonymous" ? key : "key-" + StableHash.hex(StableHash.bytes(Array(key.utf8)) >> 32, width: 8)
    }
}

enum DispatchClock {
    static func uptimeNanoseconds() -> UInt64 { NIODeadline.now().uptimeNanoseconds }
}
