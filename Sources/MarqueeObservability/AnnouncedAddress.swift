#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a process's `/metrics`, `/healthz` and `/readyz` can be reached from elsewhere, as it announces it in its
/// Kafka client id; what `marquee dashboard` reads back from the members of a consumer group.
///
/// The client id is `<name>_<host>_<port>`, such as `marquee-fetch_10.0.0.5_9101`, `marquee-fetch_fetch-0_9101`
/// or `marquee-fetch_fd00__1_9101` (an IPv6 address has its colons written as underscores). Only letters,
/// digits, `.`, `-` and `_` are used: the characters every Kafka broker takes in a client id (brokers before
/// Kafka 1.0 refuse others in their metric names, KIP-190), and none that librdkafka would have to escape where it
/// writes the client id into its statistics JSON. The name holds no `_`, a host name or IPv4 address has none
/// either, and the port is digits, so the first and the last `_` split the three apart; an underscore inside the
/// host part is an IPv6 address's colon (or, when the result is no IPv6 address, a container host name's own
/// underscore).
///
/// An unspecified host (`0.0.0.0`, `::`) announces "the address the broker sees me connect from": the reader
/// takes the member's host from the group description instead (``resolved(memberHost:)``).
public struct AnnouncedAddress: Sendable, Hashable, CustomStringConvertible {
    /// A host name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    /// The port, 1 to 65535.
    public var port: Int

    /// An address that can be announced: `nil` for port 0 (not known before the listener binds), a port out of
    /// range, or a host with characters a client id cannot carry (an IPv6 zone such as `%eth0`, spaces…).
    ///
    /// - Parameters:
    ///   - host: A host name, IPv4 address or IPv6 address, with or without brackets.
    ///   - port: 1 to 65535.
    public init?(host: String, port: Int) {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard (1...65535).contains(port), !host.isEmpty else { return nil }
        if host.contains(":") {
            guard Self.isIPv6(host) else { return nil }
        } else {
            guard host.utf8.allSatisfy(Self.isHostNameByte) else { return nil }
            // A name whose underscores would read back as an IPv6 address' colons.
            if host.contains("_"), Self.isIPv6(Self.colons(host)) { return nil }
        }
        self.host = host
        self.port = port
    }

    /// `host:port`, with an IPv6 address in brackets: what goes into a URL.
    public var description: String {
        self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
    }

    /// Whether the host is `0.0.0.0` or `::`: the announcing process leaves the host to the broker's view of it.
    public var isUnspecified: Bool { Self.isUnspecified(self.host) }

    /// This address, its unspecified host replaced by the address a consumer group member connected from (as
    /// DescribeConsumerGroups reports it: `/10.0.0.5` from Apache Kafka, `10.0.0.5` from others); `nil` when the
    /// host is unspecified and `memberHost` says nothing usable.
    public func resolved(memberHost: String) -> AnnouncedAddress? {
        guard self.isUnspecified else { return self }
        var seen = Substring(memberHost)
        if let slash = seen.lastIndex(of: "/") { seen = seen[seen.index(after: slash)...] }
        guard !seen.isEmpty, !Self.isUnspecified(String(seen)) else { return nil }
        return AnnouncedAddress(host: String(seen), port: self.port)
    }

    // MARK: Client ids

    /// The client id of a process named `name` announcing `address` (`name` alone when there is nothing to
    /// announce).
    ///
    /// - Parameters:
    ///   - name: The client's own name (`marquee-fetch`); characters other than letters, digits, `.` and `-` become
    ///     `-`.
    ///   - address: Where its observability endpoints are reached, if known.
    public static func clientID(name: String, announcing address: AnnouncedAddress?) -> String {
        let name = String(
            name.map { character in
                character.isASCII && (character.isLetter || character.isNumber || character == "." || character == "-")
                    ? character : "-"
            }
        )
        guard let address else { return name }
        return "\(name)_\(address.host.replacing(":", with: "_"))_\(address.port)"
    }

    /// The address a client id announces, if it announces one (``clientID(name:announcing:)``).
    public init?(clientID: String) {
        guard let first = clientID.firstIndex(of: "_"), let last = clientID.lastIndex(of: "_"), first < last,
            first > clientID.startIndex
        else { return nil }
        let portText = clientID[clientID.index(after: last)...]
        guard !portText.isEmpty, portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            portText.count <= 5, let port = Int(portText)
        else { return nil }
        var host = String(clientID[clientID.index(after: first)..<last])
        if host.contains("_") {
            let colons = Self.colons(host)
            if Self.isIPv6(colons) { host = colons }
        }
        self.init(host: host, port: port)
    }

    // MARK: What a process announces

    /// What a process whose listener binds `bindHost:bindPort` announces.
    ///
    /// - Parameters:
    ///   - advertised: `MARQUEE_METRICS_ADVERTISED_ADDRESS` (`host:port`, `[v6]:port`); empty for the default.
    ///   - bindHost: The address the listener binds.
    ///   - bindPort: The port it binds; 0 (a free port chosen when it binds) is known only after the client id is
    ///     set, so nothing is announced by default then.
    ///   - hostName: The machine's host name (`gethostname`), for a listener bound to every interface.
    /// - Returns: `advertised` when given; else the bind address when it is a specific one; else `hostName` with
    ///   the bound port; `nil` when the port is 0 or the address cannot be carried by a client id.
    public static func announced(
        advertised: String,
        bindHost: String,
        bindPort: Int,
        hostName: @autoclosure () -> String? = Self.hostName()
    ) -> AnnouncedAddress? {
        if let (host, port) = Self.hostAndPort(advertised) { return AnnouncedAddress(host: host, port: port) }
        guard bindPort != 0 else { return nil }
        if !Self.isUnspecified(bindHost) { return AnnouncedAddress(host: bindHost, port: bindPort) }
        guard let name = hostName(), !name.isEmpty else { return nil }
        return AnnouncedAddress(host: name, port: bindPort)
    }

    /// `host:port` or `[host]:port`, as `MARQUEE_METRICS_ADVERTISED_ADDRESS` takes it (port 1 to 65535).
    ///
    /// An IPv6 address needs its brackets; any other host may have them, so that one manifest line such as
    /// `[$(POD_IP)]:9101` serves IPv4 and IPv6 clusters alike.
    public static func hostAndPort(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex,
            let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]"), host.count >= 2 {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil  // an IPv6 address needs its brackets
        }
        return AnnouncedAddress(host: host, port: port) == nil ? nil : (host, port)
    }

    /// This machine's host name, if it has one.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = buffer.withUnsafeBufferPointer { pointer in
            String(decoding: pointer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return name.isEmpty ? nil : name
    }

    // MARK: Helpers

    /// Letters, digits, `.`, `-` and `_` (a container's host name may hold one).
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    private static func colons(_ text: String) -> String { text.replacing("_", with: ":") }

    private static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    private static func isUnspecified(_ host: String) -> Bool {
        if host == "0.0.0.0" { return true }
        var address = in6_addr()
        guard inet_pton(AF_INET6, host, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { $0.allSatisfy { $0 == 0 } }
    }
}
