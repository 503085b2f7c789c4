internal import Crypto

/// The content hash that names images in an ``ImageStore``.
public enum ContentHash {
    /// The SHA-256 of `bytes` as 64 lowercase hex digits (swift-crypto: BoringSSL on Linux, CryptoKit on Apple
    /// platforms).
    ///
    /// - Parameter bytes: The content, e.g. a downloaded poster.
    /// - Returns: The digest in hex, as ``ImageKey/original(sha256:)`` expects it.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        Self.hex(SHA256.hash(data: bytes))
    }

    /// The hex digits of `bytes`, lowercase.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `sha256Hex([])`: the payload hash of a request without a body.
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}
