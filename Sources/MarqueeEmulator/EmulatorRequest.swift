/// A request as the routes see it: method, decoded path and query, lower-cased header names, body.
public struct EmulatorRequest: Sendable {
    /// `GET`, `POST`, `HEAD` …
    public var method: String
    /// The path without the query, percent-decoded.
    public var path: String
    /// Query parameters, percent-decoded (`+` is a space); the last value wins.
    public var query: [String: String]
    /// Headers with lower-cased names; repeated headers are joined with ", ".
    public var headers: [String: String]
    /// The request body.
    public var body: [UInt8]

    /// A request from a raw request target (`/tmdb/3/movie/550?api_key=…`).
    public init(method: String, uri: String, headers: [(String, String)], body: [UInt8] = []) {
        self.method = method
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.path = Self.percentDecode(parts.first.map(String.init) ?? "/", plusIsSpace: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = Self.percentDecode(String(keyValue[0]), plusIsSpace: true)
                let value = keyValue.count == 2 ? Self.percentDecode(String(keyValue[1]), plusIsSpace: true) : ""
                query[key] = value
            }
        }
        self.query = query
        var joined: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            if let existing = joined[key] { joined[key] = existing + ", " + value } else { joined[key] = value }
        }
        self.headers = joined
        self.body = body
    }

    /// The header's value, by case-insensitive name.
    public func header(_ name: String) -> String? { self.headers[name.lowercased()] }

    /// An integer query parameter; nil when absent or not an integer.
    func int(_ name: String) -> Int? { self.query[name].flatMap { Int($0.trimmingSpaces) } }

    static func percentDecode(_ text: String, plusIsSpace: Bool) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) })
        else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let h = Self.hexValue(high), let l = Self.hexValue(low)
                else { break }
                bytes.append(h << 4 | l)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension String {
    var trimmingSpaces: Substring {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}

/// What a route answers, before conditional requests and faults are applied.
public struct EmulatorResponse: Sendable {
    /// The kind of body, which decides which faults can apply.
    public enum Kind: Sendable {
        /// A JSON document (malformed-JSON faults apply to a 200).
        case json
        /// Image bytes (truncated-image faults apply to a 200).
        case image
        /// Anything else (control, stats, error pages).
        case other
    }

    /// The HTTP status code.
    public var status: Int
    /// The `Content-Type`.
    public var contentType: String
    /// The body.
    public var body: [UInt8]
    /// What the body is.
    public var kind: Kind
    /// The entity's fixed modification time (seconds since the epoch), for `Last-Modified`.
    public var lastModified: Int?
    /// A precomputed strong ETag (cached images); computed from the body when nil.
    public var etag: String?
    /// Extra headers (`Retry-After` …).
    public var headers: [(String, String)] = []

    /// A JSON response.
    static func json(_ value: JSON, status: Int = 200, lastModified: Int? = nil) -> EmulatorResponse {
        EmulatorResponse(
            status: status,
            contentType: "application/json;charset=utf-8",
            body: value.serialized(),
            kind: .json,
            lastModified: lastModified
        )
    }

    /// A plain-text response.
    static func text(
        _ text: String,
        status: Int,
        contentType: String = "text/plain; charset=utf-8"
    )
        -> EmulatorResponse
    {
        EmulatorResponse(status: status, contentType: contentType, body: Array(text.utf8), kind: .other)
    }
}
