#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SSRF policy of image requests: the host allowlist, and which IP addresses count as public.
enum HostPolicy {
    /// Whether `host` matches an exact entry or a `*.suffix` entry (a proper subdomain of `suffix`).
    static func matches(_ host: String, allowlist: [String]) -> Bool {
        let host = self.normalized(host)
        guard !host.isEmpty else { return false }
        for entry in allowlist {
            let entry = self.normalized(entry)
            if entry.hasPrefix("*.") {
                let suffix = entry.dropFirst(1)  // ".example.org"
                if host.hasSuffix(suffix), host.count > suffix.count { return true }
            } else if entry == host {
                return true
            }
        }
        return false
    }

    /// Lowercased, without IPv6 brackets or a trailing dot.
    static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

/// An IPv4 or IPv6 address, classified for the image address policy.
enum IPAddress: Hashable, CustomStringConvertible {
    case v4([UInt8])  // 4 bytes, network order
    case v6([UInt8])  // 16 bytes, network order

    /// Parses a numeric address (`inet_pton`); `nil` for anything else.
    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// The address of a `sockaddr_in` / `sockaddr_in6` at `address`; `nil` for other families.
    init?(sockaddr address: UnsafeRawPointer, family: Int32) {
        switch family {
        case AF_INET:
            var sin = address.loadUnaligned(as: sockaddr_in.self)
            self = .v4(withUnsafeBytes(of: &sin.sin_addr) { Array($0) })
        case AF_INET6:
            var sin6 = address.loadUnaligned(as: sockaddr_in6.self)
            self = .v6(withUnsafeBytes(of: &sin6.sin6_addr) { Array($0) })
        default:
            return nil
        }
    }

    /// Whether the address is globally routable unicast: not unspecified, loopback, private (RFC 1918), shared
    /// (CGNAT, RFC 6598), link-local, unique-local, multicast, benchmarking, documentation or reserved. IPv4-mapped,
    /// IPv4-compatible, NAT64 and 6to4 IPv6 addresses are judged by the IPv4 address they carry.
    var isPublic: Bool {
        switch self {
        case .v4(let b):
            switch (b[0], b[1]) {
            case (0, _), (10, _), (127, _): return false
            case (100, 64...127): return false  // CGNAT
            case (169, 254): return false  // link-local
            case (172, 16...31), (192, 168): return false
            case (192, 0) where b[2] == 0 || b[2] == 2: return false  // IETF protocol assignments, TEST-NET-1
            case (198, 18...19): return false  // benchmarking
            case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false  // TEST-NET-2/3
            case (224...255, _): return false  // multicast, reserved, broadcast
            default: return true
            }
        case .v6(let b):
            let prefix96IsZero = b[0..<10].allSatisfy { $0 == 0 }
            if prefix96IsZero && b[10] == 0xff && b[11] == 0xff { return IPAddress.v4(Array(b[12...])).isPublic }
            if b[0..<12].allSatisfy({ $0 == 0 }) {
                // ::, ::1, and the deprecated IPv4-compatible form.
                if b[12..<15].allSatisfy({ $0 == 0 }) && b[15] <= 1 { return false }
                return IPAddress.v4(Array(b[12...])).isPublic
            }
            if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b {  // 64:ff9b::/96 NAT64
                return IPAddress.v4(Array(b[12...])).isPublic
            }
            if b[0] == 0x20 && b[1] == 0x02 { return IPAddress.v4(Array(b[2..<6])).isPublic }  // 6to4
            if b[0] & 0xfe == 0xfc { return false }  // fc00::/7 unique-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false }  // fe80::/10 link-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return false }  // fec0::/10 site-local (deprecated)
            if b[0] == 0xff { return false }  // multicast
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false }  // documentation
            if b[0] == 0x01 && b[1..<8].allSatisfy({ $0 == 0 }) { return false }  // 100::/64 discard
            return true
        }
    }

    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(let bytes):
            bytes.withUnsafeBytes { _ = inet_ntop(AF_INET, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        case .v6(let bytes):
            bytes.withUnsafeBytes { _ = inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
