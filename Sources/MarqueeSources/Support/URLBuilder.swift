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
    ///
    /// Both URLs are written as bytes, each part once (the string concatenations and joins this replaced were a
    /// few percent of a detail job's CPU; make bench-fetch); the tests keep the former way to check the two agree
    /// (`URLBuilder.characterwiseBuild` in SourceRequestTests).
    static func build(base: String, path: [String], query: [QueryItem]) -> (url: String, redactedURL: String) {
        var prefix: [UInt8] = []
        prefix.reserveCapacity(base.utf8.count + 64)
        prefix.append(contentsOf: base.utf8)
        for segment in path {
            prefix.append(UInt8(ascii: "/"))
            Self.appendPercentEncoded(segment, to: &prefix)
        }
        guard !query.isEmpty else {
            let url = String(decoding: prefix, as: UTF8.self)
            return (url, url)
        }
        var plain = prefix
        plain.reserveCapacity(prefix.count + 256)
        var redacted = prefix
        redacted.reserveCapacity(prefix.count + 256)
        for (index, item) in query.enumerated() {
            let separator = index == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&")
            plain.append(separator)
            let nameStart = plain.count
            Self.appendPercentEncoded(item.name, to: &plain)
            plain.append(UInt8(ascii: "="))
            redacted.append(separator)
            redacted.append(contentsOf: plain[nameStart...])
            let valueStart = plain.count
            Self.appendPercentEncoded(item.value, to: &plain)
            if item.isSecret {
                redacted.append(contentsOf: "REDACTED".utf8)
            } else {
                redacted.append(contentsOf: plain[valueStart...])
            }
        }
        return (String(decoding: plain, as: UTF8.self), String(decoding: redacted, as: UTF8.self))
    }

    /// The UTF-8 bytes of `text` with everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`)
    /// written as `%XX`, so spaces, `&`, `+`, `=`, `/`, `,` and non-ASCII text are safe in a path segment and in a
    /// query value.
    static func percentEncoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        Self.appendPercentEncoded(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``percentEncoded(_:)`` of `text`.
    static func appendPercentEncoded(_ text: String, to output: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(Self.hexDigit(byte >> 4))
                output.append(Self.hexDigit(byte & 0x0F))
            }
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
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
