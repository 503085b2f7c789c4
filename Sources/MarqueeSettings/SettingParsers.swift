/// The forms settings take, each a parser that refuses what does not fit.
public enum SettingParsers {
    /// Durations as operators write them: `500ms`, `10s`, `1m`, `2h` (a bare number is seconds).
    public static func duration(_ text: some StringProtocol) -> Duration? {
        let text = text.lowercased()
        let units: [(String, Duration)] = [
            ("ms", .milliseconds(1)), ("s", .seconds(1)), ("m", .seconds(60)), ("h", .seconds(3600)),
        ]
        for (suffix, unit) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value.isFinite, value < 1e9 else {
                return nil
            }
            return unit * value
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite, seconds < 1e9 else { return nil }
        return .seconds(seconds)
    }

    /// A duration within `range`.
    public static func duration(in range: ClosedRange<Duration>) -> @Sendable (String) -> Duration? {
        { text in Self.duration(text).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A whole number within `range`.
    public static func integer(in range: ClosedRange<Int>) -> @Sendable (String) -> Int? {
        { text in Int(text).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// Comma-separated items, each trimmed; empty items are dropped.
    public static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// `host:port` items, comma-separated, at least one.
    public static func brokers(_ text: String) -> [String]? {
        let items = Self.list(text)
        guard !items.isEmpty, items.allSatisfy(Self.isHostPort) else { return nil }
        return items
    }

    /// `key=value` librdkafka properties, comma-separated (a value may not hold a comma).
    public static func properties(_ text: String) -> [String: String]? {
        var properties: [String: String] = [:]
        for item in Self.list(text) {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else { return nil }
            properties[String(item[..<equals]).trimmingWhitespace()] = String(item[item.index(after: equals)...])
                .trimmingWhitespace()
        }
        return properties
    }

    /// Comma-separated durations (1 to 10), each above zero: the retry tiers' delays.
    public static func retryDelays(_ text: String) -> [Duration]? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        var delays: [Duration] = []
        for part in parts {
            guard let delay = Self.duration(part.filter { !$0.isWhitespace }), delay > .zero else { return nil }
            delays.append(delay)
        }
        return (1...10).contains(delays.count) ? delays : nil
    }

    /// A topic-name prefix: letters, digits, `.`, `_` and `-`, not empty.
    public static func topicPrefix(_ text: String) -> String? {
        guard !text.isEmpty,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") })
        else { return nil }
        return text
    }

    /// One of `choices`.
    public static func choice(_ choices: [String]) -> @Sendable (String) -> String? {
        { text in choices.contains(text) ? text : nil }
    }

    /// Any text (the setting's own reader checks it further).
    public static func text(_ text: String) -> String? { text }

    /// `host:port` with a port from 1 to 65535 and a host that is a name or address (letters, digits, `.`, `-`,
    /// `_`), or `[host]:port` (needed for an IPv6 address, allowed for any): where others reach a listener.
    public static func isAdvertisedAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return false }
        var host = text[..<colon]
        let isBracketed = host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2
        if isBracketed { host = host.dropFirst().dropLast() }
        return !host.isEmpty
            && host.allSatisfy { character in
                character.isASCII
                    && (character.isLetter || character.isNumber || "._-".contains(character)
                        || (isBracketed && character == ":"))
            }
    }

    /// `host:port` with a port from 0 to 65535 (`[v6]:port` too; an empty host is allowed).
    public static func isHostPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            return false
        }
        return (0...65535).contains(port)
    }
}

extension SettingParsers {
    /// `1`, `true`, `yes` or `on`; `0`, `false`, `no` or `off`.
    public static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }

    /// `name=rate` pairs, comma-separated, each rate a number of requests per second from 0 (0: no limit); with
    /// `names`, only those names. Empty text is no pair.
    public static func rates(names: [String]? = nil) -> @Sendable (String) -> [String: Double]? {
        { text in
            var rates: [String: Double] = [:]
            for item in Self.list(text) {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
                guard pair.count == 2, !pair[0].isEmpty, !pair[0].contains("/"), !pair[0].contains(":"),
                    names.map({ $0.contains(pair[0]) }) ?? true,
                    let rate = Double(pair[1]), rate >= 0, rate.isFinite
                else { return nil }
                rates[pair[0].lowercased()] = rate
            }
            return rates
        }
    }

    /// Text of one line: no control character.
    public static func line(_ text: String) -> String? {
        text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) ? nil : text
    }

    /// An `http` or `https` URL with a host.
    public static func httpURL(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }),
            text.count > scheme.count, !text.contains(where: \.isWhitespace)
        else { return nil }
        return text
    }

    /// A store location: `sqlite:PATH` or a `postgres://` / `postgresql://` URL (the store checks the rest).
    public static func storeLocation(_ text: String) -> String? {
        ["sqlite:", "postgres://", "postgresql://"].contains(where: { text.hasPrefix($0) }) ? text : nil
    }

    /// Comma-separated whole numbers, each within `range`, at least one.
    public static func integers(in range: ClosedRange<Int>) -> @Sendable (String) -> [Int]? {
        { text in
            let items = Self.list(text).map { Int($0) }
            guard !items.isEmpty, items.allSatisfy({ $0.map(range.contains) ?? false }) else { return nil }
            return items.compactMap { $0 }
        }
    }
}
