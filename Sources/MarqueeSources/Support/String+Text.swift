extension StringProtocol {
    /// The text without leading and trailing ASCII and Unicode whitespace (spaces, tabs, newlines, NBSP …).
    func trimmingASCIIWhitespace() -> String {
        let scalars = self.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        guard let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension String {
    /// The string shortened to `limit` characters, with `…` when it was cut.
    func shortened(to limit: Int) -> String {
        self.count <= limit ? self : String(self.prefix(limit)) + "…"
    }

    /// The string with every configured secret replaced by `REDACTED`.
    func redacting(_ secrets: [Secret]) -> String {
        var text = self
        for secret in secrets where !secret.revealed.isEmpty {
            text = text.replacing(secret.revealed, with: "REDACTED")
        }
        return text
    }
}
