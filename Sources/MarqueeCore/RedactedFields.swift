/// How a value that holds secrets shows itself: its other fields as they are, each secret as `REDACTED`, in its
/// `description` (`Name(accessKeyID: AKIA…, secretAccessKey: REDACTED)`, a secret that is not set left out) and in
/// its mirror (a secret that is not set shown as `nil`), so `print`, `dump` and string interpolation of a value
/// that contains it never show a secret.
public struct RedactedFields: Sendable {
    private let typeName: String
    private let shown: [(name: String, value: String)]
    private let secrets: [(name: String, isSet: Bool)]

    /// - Parameters:
    ///   - typeName: The name the description starts with.
    ///   - shown: The fields that may be shown, in order.
    ///   - secrets: The secret fields, after them, and whether each is set.
    public init(_ typeName: String, shown: [(name: String, value: String)], secrets: [(name: String, isSet: Bool)]) {
        self.typeName = typeName
        self.shown = shown
        self.secrets = secrets
    }

    public var description: String {
        let fields =
            self.shown.map { "\($0.name): \($0.value)" }
            + self.secrets.filter(\.isSet).map { "\($0.name): REDACTED" }
        return "\(self.typeName)(\(fields.joined(separator: ", ")))"
    }

    /// A mirror of `subject` with these fields as its children.
    public func mirror(of subject: Any) -> Mirror {
        let children: [Mirror.Child] =
            self.shown.map { (label: $0.name, value: $0.value as Any) }
            + self.secrets.map { (label: $0.name, value: ($0.isSet ? "REDACTED" : "nil") as Any) }
        return Mirror(subject, children: children, displayStyle: .struct)
    }
}
