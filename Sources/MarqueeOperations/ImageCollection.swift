public import MarqueeImageStore
public import MarqueeStore

/// The garbage collection of replaced images (`marquee images gc`, docs/image-store.md, "Replaced images").
///
/// When an entity's image changes upstream, the image worker stores the new bytes under their own hash and the
/// entity's record points at it; the old image stays, since another entity may share it, or a record on its way
/// to the indexer may name it. A collection removes the images no entity points to, last named by a record
/// before a grace period: for each one, oldest hash first, it
///
/// 1. forgets the validators that name it (no image worker answers a `304` with it any more: the next job for
///    such a URL downloads in full),
/// 2. removes its manifest first (so no worker takes the image as stored while it goes), then its variants and
///    any original from the image store,
/// 3. removes its rows (`images`, `image_variants`), unless an entity points to it again by then: such an image
///    counts as `revived`; the worker that next meets its URL finds no manifest and stores it again.
///
/// A collection stopped half-way can be run again: the rows go last, so an image half removed is found again.
public enum ImageCollection {
    /// What a collection did.
    public struct Report: Hashable, Sendable {
        /// The hashes of the images removed.
        public var removed: [String] = []
        /// Images found unreferenced that an entity pointed to again before their rows went.
        public var revived: [String] = []
        /// Removals sent to the image store (manifests, variants, originals; one already gone counts too).
        public var objects = 0

        public init() {}
    }

    /// Removes the images no entity points to and no record named since `recordedBefore` (epoch ms), at most
    /// `limit` of them.
    ///
    /// - Parameter dryRun: List what would be removed and remove nothing.
    /// - Throws: The store's or the image store's error; what was removed before it stays removed.
    public static func collect(
        store: Store,
        images: any ImageStore,
        recordedBefore: Int64,
        limit: Int = 10_000,
        dryRun: Bool = false
    ) async throws -> Report {
        var report = Report()
        for image in try await store.unreferencedImages(recordedBefore: recordedBefore, limit: limit) {
            guard ImageKey.isSHA256(image.sha256) else { continue }  // not a key this store could have written
            let keys =
                [ImageKey.manifest(sha256: image.sha256)]
                + image.variantKeys.compactMap { ImageKey(rawValue: $0) }.filter { $0.sha256 == image.sha256 }
                + [ImageKey.original(sha256: image.sha256)]
            if dryRun {
                report.removed.append(image.sha256)
                continue
            }
            try await store.forgetValidators(content: image.sha256)
            for key in keys {
                try await images.delete(key)
                report.objects += 1
            }
            if try await store.removeImage(image.sha256) {
                report.removed.append(image.sha256)
            } else {
                report.revived.append(image.sha256)
            }
        }
        return report
    }
}
