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
        self.scan(url, secretNames: self.names(secretParameters))
    }

    /// The lowercased parameter names ``scan(_:secretNames:)`` takes (made once per configuration).
    static func names(_ secretParameters: [String]) -> Set<String> {
        Set(secretParameters.map { $0.lowercased() })
    }

    /// ``scan(_:secretParameters:)`` with the names already lowercased (``names(_:)``).
    ///
    /// An ASCII URL (every URL an adapter builds) is read on its bytes: there each byte is a character, and none of
    /// the delimiters is part of the one ASCII character of two scalars ("\r\n"), so the parts are the ones the
    /// character-wise reading finds (``characterwiseScan(_:secretNames:)``, kept for the rest; equal results,
    /// tested). The character-wise scans were a twentieth of a detail job's CPU (make bench-fetch).
    static func scan(_ url: String, secretNames names: Set<String>) -> (redacted: String, secrets: [String]) {
        var url = url
        if let scanned = url.withUTF8({ Self.asciiScan($0, names: names) }) { return scanned }
        return self.characterwiseScan(url, secretNames: names)
    }

    /// ``scan(_:secretNames:)`` of an ASCII URL's bytes; `nil` when a byte is not ASCII.
    private static func asciiScan(
        _ bytes: UnsafeBufferPointer<UInt8>,
        names: Set<String>
    ) -> (redacted: String, secrets: [String])? {
        var hash: Int?
        var mark: Int?
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            if byte == UInt8(ascii: "#"), hash == nil { hash = index }
            if byte == UInt8(ascii: "?"), mark == nil, hash == nil { mark = index }
        }
        var secrets: [String] = []
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        let prefixEnd = mark ?? hash ?? bytes.count
        let prefix = UnsafeBufferPointer(rebasing: bytes[0..<prefixEnd])
        self.appendRedactingUserinfo(prefix, to: &output, secrets: &secrets)
        if let mark {
            output.append(UInt8(ascii: "?"))
            let queryEnd = hash ?? bytes.count
            let query = UnsafeBufferPointer(rebasing: bytes[(mark + 1)..<queryEnd])
            self.appendRedactingParameters(query, to: &output, names: names, secrets: &secrets)
        }
        if let hash {
            output.append(UInt8(ascii: "#"))
            let fragment = UnsafeBufferPointer(rebasing: bytes[(hash + 1)...])
            self.appendRedactingParameters(fragment, to: &output, names: names, secrets: &secrets)
        }
        return (String(decoding: output, as: UTF8.self), secrets)
    }

    /// ``redactUserinfo(_:secrets:)`` on ASCII bytes.
    private static func appendRedactingUserinfo(
        _ prefix: UnsafeBufferPointer<UInt8>,
        to output: inout [UInt8],
        secrets: inout [String]
    ) {
        var schemeEnd: Int?
        if prefix.count >= 3 {
            for index in 0...(prefix.count - 3)
            where prefix[index] == UInt8(ascii: ":") && prefix[index + 1] == UInt8(ascii: "/")
                && prefix[index + 2] == UInt8(ascii: "/")
            {
                schemeEnd = index + 3
                break
            }
        }
        guard let authorityStart = schemeEnd else { return output.append(contentsOf: prefix) }
        var authorityEnd = prefix.count
        for index in authorityStart..<prefix.count where prefix[index] == UInt8(ascii: "/") {
            authorityEnd = index
            break
        }
        var at: Int?
        for index in (authorityStart..<authorityEnd).reversed() where prefix[index] == UInt8(ascii: "@") {
            at = index
            break
        }
        guard let at else { return output.append(contentsOf: prefix) }
        var colon: Int?
        for index in authorityStart..<at where prefix[index] == UInt8(ascii: ":") {
            colon = index
            break
        }
        guard let colon else { return output.append(contentsOf: prefix) }
        if colon + 1 < at {
            secrets.append(String(decoding: UnsafeBufferPointer(rebasing: prefix[(colon + 1)..<at]), as: UTF8.self))
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: prefix[...colon]))
        output.append(contentsOf: self.placeholder.utf8)
        output.append(contentsOf: UnsafeBufferPointer(rebasing: prefix[at...]))
    }

    /// ``redactParameters(_:names:secrets:)`` on ASCII bytes.
    private static func appendRedactingParameters(
        _ query: UnsafeBufferPointer<UInt8>,
        to output: inout [UInt8],
        names: Set<String>,
        secrets: inout [String]
    ) {
        var itemStart = 0
        while true {
            var itemEnd = itemStart
            while itemEnd < query.count, query[itemEnd] != UInt8(ascii: "&") { itemEnd += 1 }
            if itemStart > 0 { output.append(UInt8(ascii: "&")) }
            let item = UnsafeBufferPointer(rebasing: query[itemStart..<itemEnd])
            self.appendRedactingParameter(item, to: &output, names: names, secrets: &secrets)
            guard itemEnd < query.count else { return }
            itemStart = itemEnd + 1
        }
    }

    private static func appendRedactingParameter(
        _ item: UnsafeBufferPointer<UInt8>,
        to output: inout [UInt8],
        names: Set<String>,
        secrets: inout [String]
    ) {
        guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else { return output.append(contentsOf: item) }
        let name = UnsafeBufferPointer(rebasing: item[..<equals])
        let isEncoded = { (bytes: UnsafeBufferPointer<UInt8>) in
            bytes.contains(UInt8(ascii: "%")) || bytes.contains(UInt8(ascii: "+"))
        }
        let normalized: String
        if isEncoded(name) {
            let text = Substring(String(decoding: name, as: UTF8.self))
            normalized = (self.percentDecoded(text) ?? String(text)).lowercased()
        } else {
            // ASCII: lowercased byte by byte, as `lowercased()` does.
            normalized = String(unsafeUninitializedCapacity: name.count) { buffer in
                for (index, byte) in name.enumerated() {
                    buffer[index] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                }
                return name.count
            }
        }
        guard names.contains(normalized) else { return output.append(contentsOf: item) }
        let value = UnsafeBufferPointer(rebasing: item[(equals + 1)...])
        if !value.isEmpty {
            let text = String(decoding: value, as: UTF8.self)
            secrets.append(text)
            // Without `%` or `+` the decoded value is the value itself.
            if isEncoded(value), let decoded = self.percentDecoded(Substring(text)), decoded != text {
                secrets.append(decoded)
            }
        }
        output.append(contentsOf: name)
        output.append(UInt8(ascii: "="))
        output.append(contentsOf: self.placeholder.utf8)
    }

    /// ``scan(_:secretNames:)``, character by character (for URLs that are not ASCII).
    static func characterwiseScan(
        _ url: String,
        secretNames names: Set<String>
    ) -> (redacted: String, secrets: [String]) {
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
