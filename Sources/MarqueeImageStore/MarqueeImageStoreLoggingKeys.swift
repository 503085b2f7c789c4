/// Log metadata keys of the image store (dotted names, one place).
public enum MarqueeImageStoreLoggingKeys {
    /// The image key.
    public static let key = "marquee.image.key"
    /// The object size in bytes.
    public static let bytes = "marquee.image.bytes"
    /// The store's location (never credentials).
    public static let location = "marquee.image.store"
}
