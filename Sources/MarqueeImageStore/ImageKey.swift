/// Where one image lives in an ``ImageStore``: content-addressed by the SHA-256 of the original download.
///
/// The layout fans out on the hash's first two byte pairs, so no folder (or S3 listing page) grows past a few
/// thousand entries:
///
/// ```
/// ab/cd/abcd…ef/original        the downloaded bytes
/// ab/cd/abcd…ef/342.webp        a variant: width 342, WebP
/// ab/cd/abcd…ef/manifest.json   what processing the original produced (written last: the variants are complete)
/// ```
///
/// Keys are always relative (no leading `/`), lowercase, and use only `[0-9a-z./]`, so they are safe as file
/// paths and as S3 object names without escaping. One other kind of key sits beside the images: the whole
/// original of a dead letter too large for its topic, `dlq/<topic>/<partition>/<offset>`
/// (``deadLetter(_:)``), whose topic name keeps its own characters (`[A-Za-z0-9._-]`, as safe).
///
/// `Codable` as its raw string (decoding validates it), so image records can carry keys.
public struct ImageKey: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The key, e.g. `"ab/cd/abcd…ef/original"`.
    public let rawValue: String

    private init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// Parses a key read back from a record; `nil` unless it has the shape ``original(sha256:)`` or
    /// ``variant(sha256:width:format:)`` produce.
    ///
    /// - Parameter rawValue: A key such as `"ab/cd/<sha256>/342.webp"`.
    public init?(rawValue: String) {
        let parts = rawValue.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, Self.isSHA256(parts[2]), parts[0] == parts[2].prefix(2),
            parts[1] == parts[2].dropFirst(2).prefix(2)
        else { return nil }
        let name = parts[3]
        if name != "original" && name != "manifest.json" {
            let pieces = name.split(separator: ".", omittingEmptySubsequences: false)
            guard pieces.count == 2, let width = Int(pieces[0]), String(width) == pieces[0],
                Self.isValidWidth(width), Self.isValidFormat(pieces[1])
            else { return nil }
        }
        self.rawValue = rawValue
    }

    /// The key of the whole original of a dead letter too large for its topic
    /// (`StageConfiguration.keepOversized`'s name): `dlq/<topic>/<partition>/<offset>`.
    ///
    /// - Returns: `nil` unless `name` has that shape: a topic name of `[A-Za-z0-9._-]` (at most 249 characters, not
    ///   `.` or `..`), a partition and an offset of decimal digits.
    public static func deadLetter(_ name: String) -> ImageKey? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "dlq", (1...249).contains(parts[1].count), parts[1] != ".",
            parts[1] != "..",
            parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }),
            parts[2...].allSatisfy({ !$0.isEmpty && $0.count <= 20 && $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return nil }
        return ImageKey(unchecked: name)
    }

    /// The key of an original download.
    ///
    /// - Parameter sha256: The 64 hex digits of the original's SHA-256 (``ContentHash/sha256Hex(_:)``); uppercase
    ///   digits are lowercased.
    /// - Returns: `"<h0h1>/<h2h3>/<sha256>/original"`.
    /// - Precondition: `sha256` is 64 hex digits.
    public static func original(sha256: String) -> ImageKey {
        let hash = Self.checkedHash(sha256)
        return ImageKey(unchecked: "\(Self.folder(of: hash))/original")
    }

    /// The key of the manifest of an original: what processing it produced, written after every variant, so
    /// its presence says the variants are complete.
    ///
    /// - Returns: `"<h0h1>/<h2h3>/<sha256>/manifest.json"`.
    /// - Precondition: `sha256` is 64 hex digits.
    public static func manifest(sha256: String) -> ImageKey {
        let hash = Self.checkedHash(sha256)
        return ImageKey(unchecked: "\(Self.folder(of: hash))/manifest.json")
    }

    /// The key of a variant of an original.
    ///
    /// - Parameters:
    ///   - sha256: The SHA-256 of the *original* (so every variant sits beside it).
    ///   - width: The variant's width in pixels (1…100 000).
    ///   - format: The file extension, lowercase letters and digits, e.g. `"webp"` or `"jpg"`.
    /// - Returns: `"<h0h1>/<h2h3>/<sha256>/<width>.<format>"`.
    /// - Precondition: `sha256` is 64 hex digits, `width` and `format` are valid.
    public static func variant(sha256: String, width: Int, format: String) -> ImageKey {
        let hash = Self.checkedHash(sha256)
        precondition(Self.isValidWidth(width), "ImageKey.variant: width \(width) is outside 1…100000")
        let format = format.lowercased()
        precondition(
            Self.isValidFormat(Substring(format)),
            "ImageKey.variant: format \"\(format)\" is not [a-z0-9]{1,10}"
        )
        return ImageKey(unchecked: "\(Self.folder(of: hash))/\(width).\(format)")
    }

    /// The SHA-256 of the original this key belongs to.
    public var sha256: String {
        String(self.rawValue.split(separator: "/")[2])
    }

    /// The key itself.
    public var description: String { self.rawValue }

    // MARK: - Validation

    /// Whether `text` is a SHA-256 as keys name it: 64 lowercase hex digits (a hash read back from a record or
    /// the store is checked with this before it makes a key).
    public static func isSHA256(_ text: String) -> Bool { Self.isSHA256(Substring(text)) }

    private static func checkedHash(_ sha256: String) -> String {
        let hash = sha256.lowercased()
        precondition(Self.isSHA256(Substring(hash)), "ImageKey: \"\(sha256)\" is not a SHA-256 in hex (64 digits)")
        return hash
    }

    private static func folder(of hash: String) -> String {
        "\(hash.prefix(2))/\(hash.dropFirst(2).prefix(2))/\(hash)"
    }

    private static func isSHA256(_ text: Substring) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func isValidWidth(_ width: Int) -> Bool { (1...100_000).contains(width) }

    private static func isValidFormat(_ format: Substring) -> Bool {
        (1...10).contains(format.utf8.count)
            && format.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7a).contains($0) }
    }
}
