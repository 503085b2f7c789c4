/// A content-addressed store of original images and their variants: a folder (``FileImageStore``) or an S3
/// bucket (``S3ImageStore``). Create one from `MARQUEE_IMAGE_STORE` with ``ImageStores/make(location:environment:fetcher:logger:)``.
///
/// Keys name content (``ImageKey``), so a key's bytes never change: ``put(_:_:contentType:)`` of a key that is
/// already stored does nothing, and a second download of the same image stores nothing new (docs/design.md, "Guarantees").
public protocol ImageStore: Sendable {
    /// Where the store is, for logs and records: `file:///abs/path` or `s3://bucket/prefix?…`; never credentials.
    var location: String { get }

    /// Whether `key` is stored.
    ///
    /// - Parameter key: The key.
    /// - Returns: `true` when an object exists under `key`.
    /// - Throws: An ``ImageStoreError`` if the store cannot tell (unreachable, refused, I/O error).
    func exists(_ key: ImageKey) async throws(ImageStoreError) -> Bool

    /// Stores `bytes` under `key`, atomically and idempotently.
    ///
    /// Readers see either nothing or the whole object, never a part. When `key` is already stored, nothing is
    /// written (the first writer wins, as content addressing allows).
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - bytes: The content.
    ///   - contentType: The media type, e.g. `image/webp` (kept where the store has metadata: S3).
    /// - Throws: An ``ImageStoreError`` if the object could not be stored.
    func put(_ key: ImageKey, _ bytes: [UInt8], contentType: String) async throws(ImageStoreError)

    /// The bytes stored under `key`.
    ///
    /// - Parameter key: The key.
    /// - Returns: The content, or `nil` when `key` is not stored.
    /// - Throws: An ``ImageStoreError`` if the store cannot be read.
    func get(_ key: ImageKey) async throws(ImageStoreError) -> [UInt8]?

    /// Removes the object under `key`; a key that is not stored is not an error.
    ///
    /// For the garbage collection of images nothing points to any more (docs/image-store.md, "Replaced images"):
    /// content addressing means a key is only removed once no record names its hash.
    ///
    /// - Parameter key: The key.
    /// - Throws: An ``ImageStoreError`` if the object could not be removed.
    func delete(_ key: ImageKey) async throws(ImageStoreError)

    /// Where an app can read `key`: a `file://` URL, or the object's S3 (endpoint) URL.
    ///
    /// - Parameter key: The key.
    /// - Returns: The URL; it carries no credentials (a private bucket still needs signed reads).
    func url(for key: ImageKey) -> String
}
