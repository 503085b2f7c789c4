public import MarqueeJSON

/// A TMDB v4 user access token: a JSON Web Token whose payload names the signed-in account in `sub` (its
/// "account object id", e.g. `5b8f7e2c0e0a2656f0008e3a`), which the v4 account paths need.
///
/// Only the payload is read; the signature is TMDB's to check. The token is a secret: nothing here logs it, and a
/// refusal never quotes it.
public enum TMDBAccessToken {
    /// The longest account object id accepted.
    public static let objectIDLength = 64

    /// The account object id a token names (`sub`), if the token is three base64url parts separated by dots whose
    /// middle one is a JSON object with a `sub` that ``isAccountObjectID(_:)`` accepts; `nil` otherwise.
    public static func accountObjectID(in token: String) -> String? {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty,
            let payload = Self.base64URLDecoded(parts[1]),
            case .object(let members) = JSONDocument.parse(payload),
            case .string(let subject) = members["sub"],
            Self.isAccountObjectID(subject)
        else { return nil }
        return subject
    }

    /// Whether `text` can be an account object id: 1…64 ASCII letters and digits (TMDB's are 24 hex digits).
    public static func isAccountObjectID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= Self.objectIDLength
            && text.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
    }

    /// A token in TMDB's shape for `subject`, with `claims` in its payload beside `sub` (for the upstream emulator
    /// and tests; its signature is `signature`, base64url-encoded, not a real one).
    public static func make(subject: String, claims: [String: JSONValue] = [:], signature: [UInt8]) -> String {
        var claims = claims
        claims["sub"] = .string(subject)
        let header = JSONValue.object(["alg": .string("HS256"), "typ": .string("JWT")])
        return [
            Self.base64URLEncoded(header.encoded()),
            Self.base64URLEncoded(JSONValue.object(JSONObject(claims)).encoded()),
            Self.base64URLEncoded(signature),
        ].joined(separator: ".")
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url, without padding.
    static func base64URLEncoded(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var chunk = UInt32(bytes[index]) << 16
            if count > 1 { chunk |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { chunk |= UInt32(bytes[index + 2]) }
            for position in 0...count { out.append(Self.alphabet[Int((chunk >> (18 - 6 * position)) & 0x3F)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64url `text` (padding optional); `nil` for a character outside the alphabet or a length
    /// no encoding has.
    static func base64URLDecoded(_ text: some Collection<UInt8>) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.count)
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"), UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "_"), UInt8(ascii: "/"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1, padding <= 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let count = min(4, values.count - index)
            var chunk: UInt32 = 0
            for position in 0..<4 {
                chunk <<= 6
                if position < count { chunk |= UInt32(values[index + position]) }
            }
            for position in 0..<(count - 1) { out.append(UInt8((chunk >> (16 - 8 * position)) & 0xFF)) }
            index += 4
        }
        return out
    }
}
