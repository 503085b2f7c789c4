extension StringProtocol {
    /// Whether the text is empty or only whitespace (ASCII or Unicode). Decided by the first character that is
    /// not whitespace, without Unicode property lookups for ASCII.
    var isBlank: Bool {
        for scalar in self.unicodeScalars {
            if scalar.isASCII {
                switch scalar.value {
                case 0x20, 0x09...0x0D: continue
                default: return false
                }
            }
            if !scalar.properties.isWhitespace { return false }
        }
        return true
    }

    /// The text without leading and trailing ASCII and Unicode whitespace (spaces, tabs, newlines, NBSP …).
    func trimmingASCIIWhitespace() -> String {
        // Most values start and end with a visible ASCII character: nothing to trim, nothing to look up.
        let utf8 = self.utf8
        if let first = utf8.first, (0x21...0x7E).contains(first), !utf8.isEmpty,
            (0x21...0x7E).contains(utf8[utf8.index(utf8.endIndex, offsetBy: -1)])
        {
            return String(self)
        }
        let scalars = self.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        guard let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        // Nothing to trim (a title in Japanese, say): the text as it is, not a copy of its scalars.
        if first == scalars.startIndex, scalars.index(after: last) == scalars.endIndex { return String(self) }
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
