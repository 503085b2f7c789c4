public import MarqueeLimits

/// The image hosts' rate limits: `--rate-limits image.tmdb.org=20,covers.openlibrary.org=5`, each the whole
/// pipeline's (docs/limits.md), named by host.
public enum ImageLimits {
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
