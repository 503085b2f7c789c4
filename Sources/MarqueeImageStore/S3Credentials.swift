import MarqueeCore

import struct Foundation.Data
import class Foundation.FileManager

/// Credentials for an ``S3ImageStore``; the description shows the access key ID only.
public struct S3Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// A session token of temporary credentials (STS), or `nil`.
    public var sessionToken: String?

    /// Creates credentials.
    ///
    /// - Parameters:
    ///   - accessKeyID: The access key ID.
    ///   - secretAccessKey: The secret access key.
    ///   - sessionToken: A session token, for temporary credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// Reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from `environment`; each may
    /// instead name a file with `<NAME>_FILE` (a mounted secret; surrounding white space is trimmed). A set
    /// variable wins over its `_FILE`.
    ///
    /// Reading a file blocks briefly; call this at start-up.
    ///
    /// - Parameter environment: The process environment.
    /// - Returns: The credentials.
    /// - Throws: An ``ImageStoreError`` (``ImageStoreError/Code/invalidLocation``) if the key ID or the secret
    ///   is missing or a `_FILE` cannot be read; the reason names variables and files, never values.
    public static func fromEnvironment(_ environment: [String: String]) throws(ImageStoreError) -> S3Credentials {
        guard let accessKeyID = try Self.value("AWS_ACCESS_KEY_ID", in: environment),
            let secret = try Self.value("AWS_SECRET_ACCESS_KEY", in: environment)
        else {
            throw ImageStoreError(
                code: .invalidLocation,
                reason: "an s3:// image store needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                    + "(or AWS_ACCESS_KEY_ID_FILE and AWS_SECRET_ACCESS_KEY_FILE)"
            )
        }
        let token = try Self.value("AWS_SESSION_TOKEN", in: environment)
        return S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secret, sessionToken: token)
    }

    private static func value(_ name: String, in environment: [String: String]) throws(ImageStoreError) -> String? {
        if let value = environment[name], !value.isEmpty { return value }
        guard let path = environment[name + "_FILE"], !path.isEmpty else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ImageStoreError(code: .invalidLocation, reason: "cannot read \(name)_FILE (\(path))")
        }
        let value = String(decoding: data, as: UTF8.self).trimmingWhitespace
        guard !value.isEmpty else {
            throw ImageStoreError(code: .invalidLocation, reason: "\(name)_FILE (\(path)) is empty")
        }
        return value
    }

    /// The access key ID; the secret and token are hidden.
    public var description: String { self.redacted.description }

    /// Same as ``description``.
    public var debugDescription: String { self.description }

    /// A mirror without the secret and the token.
    public var customMirror: Mirror { self.redacted.mirror(of: self) }

    private var redacted: RedactedFields {
        RedactedFields(
            "S3Credentials",
            shown: [("accessKeyID", self.accessKeyID)],
            secrets: [("secretAccessKey", true), ("sessionToken", self.sessionToken != nil)]
        )
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingWhitespace: String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
