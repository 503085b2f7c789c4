/// One query parameter of a request URL.
struct QueryItem: Sendable {
    var name: String
    var value: String
    /// A secret is written into ``URLBuilder/url`` and replaced by `REDACTED` in ``URLBuilder/redactedURL``.
    var isSecret: Bool = false

    init(_ name: String, _ value: String, isSecret: Bool = false) {
        self.name = name
        self.value = value
        self.isSecret = isSecret
    }
}

/// Builds request URLs: a base URL, percent-encoded path segments and a percent-encoded query, once with the
/// secrets and once with `REDACTED` in their place.
enum URLBuilder {
    /// `base` + `/` + each segment encoded + `?` + the encoded query.
    static func build(base: String, path: [String], query: [QueryItem]) -> (url: String, redactedURL: String) {
        var prefix = base
        for segment in path { prefix += "/" + Self.percentEncoded(segment) }
        guard !query.isEmpty else { return (prefix, prefix) }
        let plain = query.map { "\(Self.percentEncoded($0.name))=\(Self.percentEncoded($0.value))" }
        let redacted = query.map {
            "\(Self.percentEncoded($0.name))=\($0.isSecret ? "REDACTED" : Self.percentEncoded($0.value))"
        }
        return (prefix + "?" + plain.joined(separator: "&"), prefix + "?" + redacted.joined(separator: "&"))
    }

    /// The UTF-8 bytes of `text` with everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`)
    /// written as `%XX`, so spaces, `&`, `+`, `=`, `/`, `,` and non-ASCII text are safe in a path segment and in a
    /// query value.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return result
    }

    /// The lowercased host of an absolute `http`/`https` URL, without port or credentials; `nil` for anything
    /// else (relative URLs, other schemes, no host, whitespace).
    static func host(of url: String) -> String? {
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
        } else {
            return nil
        }
        guard !url.contains(where: { $0.isWhitespace }) else { return nil }
        var authority = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
        } else {
            host = authority.prefix(while: { $0 != ":" })
        }
        return host.isEmpty ? nil : String(host)
    }
}
