public import MarqueeCore

/// A failure of an ``ImageStore``.
///
/// ``isRetriable`` tells the pipeline's retry tiers what to do: an unreachable or overloaded store (connection
/// refused, timeouts, 5xx, a full disk) is transient; refused credentials, a bad location or an unexpected
/// answer are not. Descriptions never contain credentials.
public struct ImageStoreError: RetriableError, Sendable {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case unavailable
            case denied
            case invalidLocation
            case io
        }

        fileprivate let value: Value

        /// The store cannot be reached or is overloaded: connection refused or reset, timeouts, HTTP 5xx/429, a
        /// full disk or a read-only file system, an I/O error of the device. Retriable.
        public static let unavailable = Code(value: .unavailable)
        /// The store refused the credentials or the operation: HTTP 401/403, `EACCES`/`EPERM`.
        public static let denied = Code(value: .denied)
        /// The location is malformed or names something that does not exist (no such bucket, wrong region, a
        /// file where a folder should be), or credentials are missing.
        public static let invalidLocation = Code(value: .invalidLocation)
        /// Any other failure: an unexpected status or file-system error.
        public static let io = Code(value: .io)

        /// The code's name, e.g. `unavailable`.
        public var description: String {
            switch self.value {
            case .unavailable: "unavailable"
            case .denied: "denied"
            case .invalidLocation: "invalidLocation"
            case .io: "io"
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, for people; never credentials.
    public var reason: String
    /// The key concerned, if any.
    public var key: ImageKey?
    /// The error underneath (an `HTTPFetchError`), if any.
    public var underlying: (any Error)?
    /// Where the error was created (`#fileID`).
    public var file: String
    /// Where the error was created (`#line`).
    public var line: Int

    /// Whether trying again later can succeed: ``Code/unavailable`` only.
    public var isRetriable: Bool { self.code == .unavailable }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What happened; must not contain credentials.
    ///   - key: The key concerned.
    ///   - underlying: The error underneath.
    ///   - file: The creating file.
    ///   - line: The creating line.
    public init(
        code: Code,
        reason: String,
        key: ImageKey? = nil,
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.key = key
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// `ImageStoreError.<code>: <reason> (key <key>)`.
    public var description: String {
        var text = "ImageStoreError.\(self.code): \(self.reason)"
        if let key { text += " (key \(key))" }
        return text
    }
}
