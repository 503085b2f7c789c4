#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Host` names an HTTP listener answers, so that a web page on another site cannot read it through a
/// browser on the operator's machine (DNS rebinding).
///
/// A page on `http://evil.example:8080/` whose name its owner then points at `127.0.0.1` stays, for the
/// browser, the same origin: its scripts may read whatever now answers there, and the browser sends
/// `Host: evil.example:8080`. A listener that answers only names it knows refuses such a request
/// (``HostAllowListMiddleware``), and the page reads nothing.
///
/// What it answers (``dashboard`` and ``observability`` are the two defaults):
/// - the names and addresses listed (``loopback`` are `localhost`, `127.0.0.1` and `::1`); `.example.org` also
///   answers every name under `example.org`; `*` answers any name (the check is off);
/// - with ``allowsIPAddresses``, any literal IP address: a browser sends one only when it connected to that very
///   address, so the page asking is one this listener served, not another site's — rebinding needs a name;
/// - with ``allowsSingleLabelNames``, any name without a dot (`marquee-fetch`, a Compose or Kubernetes
///   service): such names come from the local resolver (hosts file, search domains, the container network), never
///   from a domain an outside site's owner registered;
/// - a request without a `Host` header: a browser always sends one.
///
/// The port is not compared: a rebinding page cannot choose the name its requests carry, whatever the port.
public struct HostAllowList: Sendable, Hashable {
    /// An entry that is no host name, address or `.suffix`.
    public struct InvalidEntry: Error, CustomStringConvertible, Sendable {
        /// The entry as given.
        public var entry: String
        /// What is wrong with it.
        public var reason: String
        public var description: String { "'\(self.entry)' \(self.reason)" }
    }

    /// The names and addresses answered: lowercased, without a trailing dot or IPv6 brackets, addresses in
    /// their canonical form; `.suffix` entries answer that name and every name under it.
    public private(set) var entries: [String]
    /// Whether any literal IP address is answered. Default: `false`.
    public var allowsIPAddresses: Bool
    /// Whether any name without a dot is answered. Default: `false`.
    public var allowsSingleLabelNames: Bool

    /// The loopback names every Marquee listener answers: `localhost`, `127.0.0.1`, `::1`.
    public static let loopback: [String] = ["localhost", "127.0.0.1", "::1"]

    /// - Parameters:
    ///   - entries: Host names (`dashboard.example.org`), addresses (`10.0.0.5`, `::1` or `[::1]`), `.suffix`
    ///     entries (`.example.org`: the name and every name under it) or `*` (any name), without a port.
    ///   - allowsIPAddresses: Whether any literal IP address is answered too.
    ///   - allowsSingleLabelNames: Whether any name without a dot is answered too.
    /// - Throws: ``InvalidEntry`` for an empty entry, one with a port, a scheme or a path, or characters no host
    ///   name has.
    public init(
        _ entries: [String],
        allowsIPAddresses: Bool = false,
        allowsSingleLabelNames: Bool = false
    ) throws(InvalidEntry) {
        self.init(normalized: [], allowsIPAddresses: allowsIPAddresses, allowsSingleLabelNames: allowsSingleLabelNames)
        self = try self.adding(entries)
    }

    private init(normalized entries: [String], allowsIPAddresses: Bool, allowsSingleLabelNames: Bool) {
        self.entries = entries
        self.allowsIPAddresses = allowsIPAddresses
        self.allowsSingleLabelNames = allowsSingleLabelNames
    }

    /// What `marquee dashboard` answers by default: ``loopback`` only (no other address, no other name).
    public static let dashboard = HostAllowList(
        normalized: Self.loopback,
        allowsIPAddresses: false,
        allowsSingleLabelNames: false
    )

    /// What a worker's observability listener answers by default: ``loopback``, any IP address (Kubernetes probes
    /// and Prometheus ask by pod IP) and any name without a dot (`marquee status` asks Compose and Kubernetes
    /// services by name). Names with a dot (`marquee-fetch.marquee.svc`) have to be added.
    public static let observability = HostAllowList(
        normalized: Self.loopback,
        allowsIPAddresses: true,
        allowsSingleLabelNames: true
    )

    /// This list with `entries` added (the forms ``init(_:allowsIPAddresses:allowsSingleLabelNames:)`` takes).
    ///
    /// - Throws: ``InvalidEntry`` for an entry that is no host name, address, `.suffix` or `*`.
    public func adding(_ entries: [String]) throws(InvalidEntry) -> HostAllowList {
        var list = self
        for entry in entries {
            let normalized = try Self.validated(entry)
            if !list.entries.contains(normalized) { list.entries.append(normalized) }
        }
        return list
    }

    /// This list with the address a listener binds added (`0.0.0.0` and `::` too: harmless, since a browser sends
    /// them only when it connected to them).
    ///
    /// The bind address comes from the listener's own setting, which has been parsed already: an address or a
    /// name this list could not take is left out rather than refused.
    public func adding(bindAddress: String) -> HostAllowList {
        var list = self
        if let normalized = try? Self.validated(bindAddress), !list.entries.contains(normalized) {
            list.entries.append(normalized)
        }
        return list
    }

    /// Comma-separated entries as an environment variable holds them (`a.example,b.example`), blanks dropped.
    public static func split(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.filter { !$0.isWhitespace } }.filter { !$0.isEmpty }
    }

    /// Whether a request whose `Host` header is `host` (`name`, `name:port`, `[v6]:port`) is answered; `nil` or
    /// an empty value (no header) is.
    public func allows(host: String?) -> Bool {
        guard let host, !host.isEmpty else { return true }
        guard let name = Self.name(ofHostHeader: host) else { return false }
        if self.entries.contains("*") || self.entries.contains(name) { return true }
        if Self.canonicalAddress(name) != nil { return self.allowsIPAddresses }
        if self.allowsSingleLabelNames, !name.contains(".") { return true }
        return self.entries.contains { entry in
            entry.hasPrefix(".") && (name == entry.dropFirst() || name.hasSuffix(entry))
        }
    }

    // MARK: - Parsing

    /// The name of a `Host` header value, normalized as entries are; `nil` when it is malformed.
    static func name(ofHostHeader value: String) -> String? {
        var name = Substring(value)
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return nil }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || Self.isPort(rest) else { return nil }
            name = name[name.index(after: name.startIndex)..<close]
            return Self.canonicalAddress(String(name))
        }
        if let colon = name.firstIndex(of: ":") {
            guard Self.isPort(name[colon...]) else { return nil }  // more than one colon: an unbracketed IPv6
            name = name[..<colon]
        }
        guard let normalized = Self.normalizedName(name) else { return nil }
        return Self.canonicalAddress(normalized) ?? normalized
    }

    /// `:` followed by one to five digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.dropFirst()
        return text.first == ":" && !digits.isEmpty && digits.count <= 5 && digits.allSatisfy(\.isASCII)
            && digits.allSatisfy(\.isNumber)
    }

    /// A host name lowercased without its trailing dot; `nil` unless it is letters, digits, `-`, `_` and `.`.
    private static func normalizedName(_ name: Substring) -> String? {
        var name = name.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty,
            name.unicodeScalars.allSatisfy({ scalar in
                scalar.isASCII
                    && (("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
                        || "-_.".unicodeScalars.contains(scalar))
            })
        else { return nil }
        return name
    }

    /// `text` as an IP address in its canonical form (`inet_ntop` of `inet_pton`); `nil` if it is none.
    static func canonicalAddress(_ text: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    /// An entry as it is stored, or why it cannot be one.
    private static func validated(_ entry: String) throws(InvalidEntry) -> String {
        let trimmed = String(entry.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        func invalid(_ reason: String) -> InvalidEntry { InvalidEntry(entry: entry, reason: reason) }
        guard !trimmed.isEmpty else { throw invalid("is empty: give a host name or an address") }
        if trimmed == "*" { return "*" }
        guard !trimmed.contains("/") else {
            throw invalid("is not a host name: give the name alone, without a scheme or a path")
        }
        var address = trimmed
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if let canonical = Self.canonicalAddress(address) { return canonical }
        if trimmed.contains(":") {
            throw invalid("has a port (or is no address): give the name alone, the port is not compared")
        }
        let isSuffix = trimmed.hasPrefix(".")
        let name = isSuffix ? trimmed.dropFirst() : Substring(trimmed)
        guard let normalized = Self.normalizedName(name), !normalized.hasPrefix("."), !normalized.contains("..") else {
            throw invalid("is not a host name (letters, digits, '-', '_' and '.'; '.example.org' for a domain)")
        }
        return isSuffix ? "." + normalized : normalized
    }
}
