/// A parsed `s3://bucket/prefix?endpoint=…&region=…&path_style=…` location.
///
/// - `bucket`: 3–63 characters of `[a-z0-9.-]`, starting and ending with a letter or digit.
/// - `prefix`: optional folders in front of every key (`[A-Za-z0-9._-]` segments joined by `/`).
/// - `endpoint`: `http(s)://host[:port]` of an S3-compatible service (MinIO, moto, R2); without it, AWS:
///   `https://<bucket>.s3.<region>.amazonaws.com`.
/// - `region`: the signing region. Default: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
/// - `path_style`: `true` for `<endpoint>/<bucket>/<key>`, `false` for `<bucket>.<host>/<key>`. Default: `true`
///   with an endpoint, `false` without.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The key prefix without leading or trailing `/` (empty for none).
    public var prefix: String
    /// The signing region.
    public var region: String
    /// The endpoint `scheme://host[:port]`, or `nil` for AWS.
    public var endpoint: String?
    /// Whether the bucket goes in the path (`true`) or the host name (`false`).
    public var usesPathStyle: Bool

    /// Parses a location.
    ///
    /// - Parameters:
    ///   - location: An `s3://` location.
    ///   - environment: Where `AWS_REGION` / `AWS_DEFAULT_REGION` come from.
    /// - Throws: An ``ImageStoreError`` (``ImageStoreError/Code/invalidLocation``) naming what is wrong. The
    ///   reason never repeats a userinfo part (credentials belong in `AWS_*` variables).
    public init(parsing location: String, environment: [String: String] = [:]) throws(ImageStoreError) {
        func invalid(_ reason: String) -> ImageStoreError {
            ImageStoreError(code: .invalidLocation, reason: "invalid s3:// image store location: \(reason)")
        }
        guard location.hasPrefix("s3://") else { throw invalid("it must start with s3://") }
        let rest = location.dropFirst(5)
        let (pathPart, queryPart) =
            rest.firstIndex(of: "?").map { (rest[..<$0], rest[rest.index(after: $0)...]) } ?? (rest, "")
        guard !pathPart.contains("@") else {
            throw invalid("credentials do not belong in the location; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        let bucket = String(pathPart.prefix { $0 != "/" })
        guard Self.isValidBucket(bucket) else {
            throw invalid("bucket \"\(bucket)\" is not 3–63 characters of a-z, 0-9, '.', '-'")
        }
        let prefixSegments = pathPart.dropFirst(bucket.count).split(separator: "/")
        for segment in prefixSegments {
            guard segment != ".", segment != "..",
                segment.utf8.allSatisfy({ Self.isUnreserved($0) })
            else { throw invalid("prefix segment \"\(segment)\" may only contain A-Z, a-z, 0-9, '.', '_', '-'") }
        }

        var parameters: [String: String] = [:]
        for item in queryPart.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0])
            guard ["endpoint", "region", "path_style"].contains(name) else {
                throw invalid("unknown parameter \"\(name)\" (known: endpoint, region, path_style)")
            }
            parameters[name] = pair.count > 1 ? Self.percentDecoded(pair[1]) : ""
        }

        var endpoint: String?
        if let value = parameters["endpoint"] {
            var trimmed = Substring(value)
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            let lowered = trimmed.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
                throw invalid("endpoint must be http://host[:port] or https://host[:port]")
            }
            let authority = trimmed.drop(while: { $0 != ":" }).dropFirst(3)
            guard !authority.isEmpty, !authority.contains("@") else {
                throw invalid("endpoint must be http(s)://host[:port], without credentials")
            }
            guard !authority.contains("/"), !authority.contains("?"), !authority.contains("#") else {
                throw invalid("endpoint must be http(s)://host[:port] without a path")
            }
            endpoint = String(trimmed)
        }
        let region =
            parameters["region"] ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard !region.isEmpty, region.utf8.allSatisfy({ Self.isUnreserved($0) }) else {
            throw invalid("region \"\(region)\" is not a region name")
        }
        var usesPathStyle = endpoint != nil
        if let value = parameters["path_style"] {
            switch value {
            case "true", "1": usesPathStyle = true
            case "false", "0": usesPathStyle = false
            default: throw invalid("path_style must be true or false")
            }
        }
        self.bucket = bucket
        self.prefix = prefixSegments.joined(separator: "/")
        self.region = region
        self.endpoint = endpoint
        self.usesPathStyle = usesPathStyle
    }

    /// The location in canonical form: `s3://bucket[/prefix]?region=…[&endpoint=…][&path_style=…]`.
    public var description: String {
        var text = "s3://\(self.bucket)" + (self.prefix.isEmpty ? "" : "/\(self.prefix)") + "?region=\(self.region)"
        if let endpoint { text += "&endpoint=\(endpoint)" }
        if self.usesPathStyle != (self.endpoint != nil) { text += "&path_style=\(self.usesPathStyle)" }
        return text
    }

    /// The URL of the bucket itself (for creating it).
    public var bucketURL: String {
        let (scheme, host) = self.schemeAndHost
        return self.usesPathStyle ? "\(scheme)://\(host)/\(self.bucket)" : "\(scheme)://\(self.bucket).\(host)"
    }

    /// The URL of an object (`key` is joined to the prefix).
    ///
    /// - Parameter key: The image key.
    /// - Returns: The path-style or virtual-hosted URL.
    public func objectURL(_ key: ImageKey) -> String {
        self.bucketURL + "/" + self.objectName(key)
    }

    /// The object name of `key`: `<prefix>/<key>`, or the key without a prefix.
    public func objectName(_ key: ImageKey) -> String {
        self.prefix.isEmpty ? key.rawValue : "\(self.prefix)/\(key.rawValue)"
    }

    private var schemeAndHost: (String, String) {
        guard let endpoint else { return ("https", "s3.\(self.region).amazonaws.com") }
        let scheme = endpoint.prefix { $0 != ":" }.lowercased()
        return (scheme, String(endpoint.dropFirst(scheme.count + 3)))
    }

    private static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func isAlphanumeric(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x7a).contains(byte) }
        return (3...63).contains(bytes.count) && isAlphanumeric(bytes.first!) && isAlphanumeric(bytes.last!)
            && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
