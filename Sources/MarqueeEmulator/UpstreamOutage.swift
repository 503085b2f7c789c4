import MarqueeJSON

/// An upstream (or every upstream) that is down until a deadline: each of its requests is answered 503 in the
/// upstream's own error shape.
///
/// Set with `POST /_control {"outage": {"upstream": "tmdb", "seconds": 60}}`, ended early with
/// `{"outage": null}` or `"seconds": 0`. Unlike the 5xx fault share, which hits random requests, an outage hits
/// every request of one upstream for a stretch of time, so a test can check that one source being down leaves
/// the others working, and that clients come back once it is up again.
struct UpstreamOutage: Sendable, Equatable {
    /// What a `POST /_control` body asks of the outage.
    enum Change: Sendable, Equatable {
        /// Start (or replace) an outage of `upstream` (nil: every upstream) lasting `seconds`.
        case start(upstream: Upstream?, seconds: Double)
        /// End any outage now.
        case end
    }

    /// The name that stands for every upstream.
    static let everyUpstream = "all"

    /// The names an outage accepts: `all`, then every upstream but the emulator's own endpoints.
    static let names: [String] =
        [Self.everyUpstream] + Upstream.allCases.filter { $0 != .emulator }.map(\.rawValue)

    /// The upstream that is down; nil when every one is.
    var upstream: Upstream?
    /// When the outage ends, on the emulator's uptime clock (nanoseconds).
    var until: UInt64

    /// Whether a request to `upstream` falls in this outage at `now`.
    func covers(_ upstream: Upstream, at now: UInt64) -> Bool {
        guard upstream != .emulator, now < self.until else { return false }
        return self.upstream == nil || self.upstream == upstream
    }

    /// `GET /_control`'s view at `now`: the upstream's name and the seconds left (millisecond precision).
    func json(at now: UInt64) -> JSON {
        let left = self.until > now ? Double((self.until - now) / 1_000_000) / 1000 : 0
        return .object([
            ("upstream", .string(self.upstream?.rawValue ?? Self.everyUpstream)),
            ("secondsLeft", .double(left)),
        ])
    }

    /// Reads the `outage` field of a `POST /_control` body: `null`, or an object with `upstream` (a name of
    /// ``names``) and `seconds` (0 … 1,000,000; 0 ends the outage).
    ///
    /// - Throws: ``ControlError`` saying what is wrong, listing the accepted names for an unknown upstream.
    static func change(_ value: JSONValue) throws(ControlError) -> Change {
        if value == .null { return .end }
        guard case .object(let object) = value else {
            throw ControlError(reason: "outage must be null or {\"upstream\": NAME, \"seconds\": N}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "upstream" && $0 != "seconds" }) {
            throw ControlError(reason: "unknown field outage.\(unknown) (give upstream and seconds)")
        }
        guard case .string(let name)? = object["upstream"] else {
            throw ControlError(reason: "outage.upstream must be one of \(Self.names.joined(separator: ", "))")
        }
        let upstream: Upstream?
        if name == Self.everyUpstream {
            upstream = nil
        } else if let named = Upstream(rawValue: name), named != .emulator {
            upstream = named
        } else {
            throw ControlError(
                reason: "unknown upstream '\(name)' in outage.upstream; one of \(Self.names.joined(separator: ", "))"
            )
        }
        guard let seconds = object["seconds"]?.number,
            seconds.isFinite, (0...1_000_000).contains(seconds)
        else {
            throw ControlError(reason: "outage.seconds must be a number in 0…1000000 (0 ends the outage)")
        }
        return seconds == 0 ? .end : .start(upstream: upstream, seconds: seconds)
    }
}
