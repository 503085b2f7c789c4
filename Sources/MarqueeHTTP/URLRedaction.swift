/// Hides credentials carried in URLs: secret query parameters and a userinfo password.
///
/// Works on the URL text, so it also redacts URLs that do not parse.
enum URLRedaction {
    /// What replaces a secret.
    static let placeholder = "REDACTED"

    /// The query parameters redacted when the caller names none.
    static let defaultSecretParameters = ["api_key", "key", "serviceKey", "apikey", "access_token"]

    /// `url` with the value of every parameter named in `secretParameters` (case-insensitive, in the query and
    /// the fragment) and any userinfo password replaced by ``placeholder``.
    static func redact(_ url: String, secretParameters: [String]) -> String {
        self.scan(url, secretParameters: secretParameters).redacted
    }

    /// The secret values `url` carries (non-empty parameter values and a password), raw as they appear.
    static func secrets(in url: String, secretParameters: [String]) -> [String] {
        self.scan(url, secretParameters: secretParameters).secrets
    }

    /// `url` redacted (as ``redact(_:secretParameters:)``) and the secrets it carries (as
    /// ``secrets(in:secretParameters:)``), from one pass: a fetch needs both.
    static func scan(_ url: String, secretParameters: [String]) -> (redacted: String, secrets: [String]) {
        let names = Set(secretParameters.map { $0.lowercased() })
        var secrets: [String] = []
        var rest = Substring(url)
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var result = self.redactUserinfo(rest, secrets: &secrets)
        if let query {
            result += "?" + self.redactParameters(query, names: names, secrets: &secrets)
        }
        if let fragment {
            result += "#" + self.redactParameters(fragment, names: names, secrets: &secrets)
        }
        return (result, secrets)
    }

    private static func redactUserinfo(_ prefix: Substring, secrets: inout [String]) -> String {
        guard let schemeEnd = prefix.firstRange(of: "://") else { return String(prefix) }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = prefix[authorityStart...].firstIndex(of: "/") ?? prefix.endIndex
        let authority = prefix[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return String(prefix) }
        let userinfo = authority[..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return String(prefix) }
        let password = userinfo[userinfo.index(after: colon)...]
        if !password.isEmpty { secrets.append(String(password)) }
        return String(prefix[..<userinfo.index(after: colon)]) + self.placeholder + String(prefix[at...])
    }

    private static func redactParameters(_ query: Substring, names: Set<String>, secrets: inout [String]) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let name = item[..<equals]
            let normalized = (self.percentDecoded(name) ?? String(name)).lowercased()
            guard names.contains(normalized) else { return String(item) }
            let value = item[item.index(after: equals)...]
            if !value.isEmpty {
                secrets.append(String(value))
                if let decoded = self.percentDecoded(value), decoded != value { secrets.append(decoded) }
            }
            return String(name) + "=" + self.placeholder
        }.joined(separator: "&")
    }

    /// Percent-decodes (and turns `+` into a space); `nil` if the result is not UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        guard text.contains("%") || text.contains("+") else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` with every occurrence of a secret replaced by ``placeholder`` (for curl's error messages).
    static func scrub(_ text: String, secrets: [String]) -> String {
        var text = text
        for secret in secrets where secret.utf8.count >= 3 {
            text = text.replacing(secret, with: self.placeholder)
        }
        return text
    }
}
