import MarqueeCore

/// AWS Signature Version 4 credentials for a request, signed by libcurl (`CURLOPT_AWS_SIGV4`).
///
/// libcurl adds `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` and `X-Amz-Date`
/// (the prefix comes from the provider), hashing the request body into the signature. The request's own headers
/// (for S3: `x-amz-content-sha256`, `Content-Type`) are signed too. With a ``sessionToken`` the fetcher adds
/// `x-amz-security-token` (signed as well).
///
/// The secret and the token never appear in descriptions, logs or errors: ``description`` and the mirror show
/// the provider and the access key ID only.
public struct AWSSigV4: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// libcurl's provider string `provider1[:provider2[:region[:service]]]`, e.g. `"aws:amz:us-east-1:s3"`.
    public var provider: String
    /// The access key ID (sent in the `Credential=` part of the header).
    public var accessKeyID: String
    /// The secret access key; only the signature derived from it is sent.
    public var secretAccessKey: String
    /// A temporary session token (STS), sent as `x-amz-security-token`; `nil` for long-lived keys.
    public var sessionToken: String?

    /// Creates signing credentials.
    ///
    /// - Parameters:
    ///   - provider: libcurl's provider string, e.g. `"aws:amz:us-east-1:s3"`.
    ///   - accessKeyID: The access key ID.
    ///   - secretAccessKey: The secret access key.
    ///   - sessionToken: A session token for temporary credentials.
    public init(provider: String, accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.provider = provider
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The provider and access key ID; never the secret or the token.
    public var description: String { self.redacted.description }

    /// Same as ``description``.
    public var debugDescription: String { self.description }

    /// A mirror without the secret and the token, so `dump` and `String(reflecting:)` of containing values
    /// do not show them.
    public var customMirror: Mirror { self.redacted.mirror(of: self) }

    private var redacted: RedactedFields {
        RedactedFields(
            "AWSSigV4",
            shown: [("provider", self.provider), ("accessKeyID", self.accessKeyID)],
            secrets: [("secretAccessKey", true), ("sessionToken", self.sessionToken != nil)]
        )
    }

    /// The header prefix libcurl uses for this provider: `x-<provider2>-` (`x-amz-` for AWS).
    var headerPrefix: String {
        let parts = self.provider.split(separator: ":", omittingEmptySubsequences: false)
        let second = parts.count > 1 ? parts[1] : parts[0]
        return "x-\(second.lowercased())-"
    }

    /// Values that must be scrubbed from any text leaving the fetcher.
    var secrets: [String] {
        [self.secretAccessKey] + (self.sessionToken.map { [$0] } ?? [])
    }
}
