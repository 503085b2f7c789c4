public import MarqueeLimits

/// The image hosts' rate limits: `--rate-limits image.tmdb.org=20,covers.openlibrary.org=5`, each the whole
/// pipeline's (docs/limits.md), named by host.
public enum ImageLimits {
    /// A `--rate-limits` value that cannot be used, with what is wrong.
    public struct InvalidRateLimits: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses `host=rate,…` (rate in requests per second, 0 = no limit; hosts lowercased).
    public static func parse(_ text: String) throws(InvalidRateLimits) -> [(host: String, rate: Double)] {
        var limits: [(host: String, rate: Double)] = []
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0.filter { !$0.isWhitespace }) }
            guard pair.count == 2, !pair[0].isEmpty, !pair[0].contains("/"), !pair[0].contains(":"),
                let rate = Double(pair[1]),
                rate >= 0, rate.isFinite
            else {
                throw InvalidRateLimits(
                    description:
                        "rate limit '\(part)' is not host=rate (a host name such as image.tmdb.org, a rate in requests per second)"
                )
            }
            if rate > 0 { limits.append((pair[0].lowercased(), rate)) }
        }
        return limits
    }

    /// The limits for ``SourceLimits``: one per host, without a key.
    public static func sourceLimits(_ rates: [(host: String, rate: Double)]) -> [SourceLimit] {
        rates.map { SourceLimit(source: $0.host, displayName: $0.host, key: nil, host: $0.host, rate: $0.rate) }
    }

    /// The host name of `url`, lowercased, without its port: what a limit is named by.
    public static func host(ofURL url: String) -> String {
        let hostAndPort = SourceLimit.hostAndPort(ofURL: url)
        if hostAndPort.hasPrefix("["), let end = hostAndPort.firstIndex(of: "]") {
            return String(hostAndPort[...end])
        }
        return String(hostAndPort.split(separator: ":", maxSplits: 1).first ?? "")
    }
}
