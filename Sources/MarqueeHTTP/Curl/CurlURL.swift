internal import CMarqueeCurl
internal import Ccurl

/// The parts of an absolute URL that the fetcher's policies need, parsed by libcurl's URL API (the same parser
/// that will fetch it, so the host checked is the host connected to).
struct CurlURL: Sendable, Hashable {
    /// `http` or `https`, lowercased.
    var scheme: String
    /// The host, lowercased, IPv6 addresses in brackets.
    var host: String
    /// The port, explicit or the scheme's default.
    var port: Int

    /// `host:port`, the default rate-limit bucket key.
    var hostAndPort: String { "\(self.host):\(self.port)" }

    /// Parses `url`; returns `nil` (and why) for a malformed URL or a scheme other than `http`/`https`.
    static func parse(_ url: String) -> Result<CurlURL, ParseFailure> {
        guard let handle = curl_url() else { return .failure(.init(reason: "curl_url failed (out of memory?)")) }
        defer { curl_url_cleanup(handle) }
        let set = curl_url_set(handle, CURLUPART_URL, url, 0)
        guard set == CURLUE_OK else {
            return .failure(.init(reason: "malformed URL: \(String(cString: curl_url_strerror(set)))"))
        }
        func part(_ what: CURLUPart, flags: UInt32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, what, &value, flags) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME)?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(.init(reason: "only http and https URLs are fetched"))
        }
        guard let host = part(CURLUPART_HOST)?.lowercased(), !host.isEmpty else {
            return .failure(.init(reason: "the URL has no host"))
        }
        guard let port = part(CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) }) else {
            return .failure(.init(reason: "the URL has no valid port"))
        }
        return .success(CurlURL(scheme: scheme, host: host, port: port))
    }

    struct ParseFailure: Error {
        var reason: String
    }
}
