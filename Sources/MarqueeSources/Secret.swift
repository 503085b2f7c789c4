/// A credential such as an API key, kept out of every description, debug description and mirror.
///
/// `"\(secret)"`, `String(reflecting: secret)` and `dump(secret)` all print `<redacted>`; only ``revealed`` gives
/// the value, at the one place that puts it into a request.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret value. Read it only to build a request.
    public let revealed: String

    /// Wraps a secret value.
    ///
    /// - Parameter revealed: The credential, e.g. an API key.
    public init(_ revealed: String) {
        self.revealed = revealed
    }

    /// Always `<redacted>`.
    public var description: String { "<redacted>" }

    /// Always `<redacted>`.
    public var debugDescription: String { "<redacted>" }

    /// A mirror without children, so `dump` shows nothing of the value.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
