/// An image no entity points to any more: its hash and the image-store keys of its variants.
public struct UnreferencedImage: Hashable, Sendable {
    /// The SHA-256 of the downloaded bytes: the image's natural key.
    public var sha256: String
    /// The `store_key` of each variant, as recorded.
    public var variantKeys: [String]
}

// MARK: - Store + image collection

/// The store's part of the garbage collection of replaced images (docs/image-store.md, "Replaced images"): an
/// entity that gets a new image points to the new hash at once, and the old image stays until a collection finds
/// that nothing points to it.
extension Store {
    /// Images that no `entity_images` row names and that no record named since `recordedBefore` (epoch
    /// milliseconds: a record still on its way to the indexer may name one again), at most `limit`, by hash.
    public func unreferencedImages(recordedBefore: Int64, limit: Int) async throws -> [UnreferencedImage] {
        let dialect = self.engine.dialect
        let hashes = try await self.engine.read(
            dialect.placeholders(
                """
                SELECT i.sha256 FROM images i
                 WHERE i.fetched_at < ?
                   AND NOT EXISTS (SELECT 1 FROM entity_images e WHERE e.sha256 = i.sha256)
                 ORDER BY i.sha256 LIMIT ?
                """
            ),
            [.int(recordedBefore), .int(Int64(limit))]
        ).compactMap { $0.first?.text }
        var images: [UnreferencedImage] = []
        images.reserveCapacity(hashes.count)
        for hash in hashes {
            let keys = try await self.engine.read(
                dialect.placeholders("SELECT store_key FROM image_variants WHERE sha256 = ? ORDER BY store_key"),
                [.text(hash)]
            ).compactMap { $0.first?.text }
            images.append(UnreferencedImage(sha256: hash, variantKeys: keys))
        }
        return images
    }

    /// Forgets the validators that would revalidate onto the image `sha256`, so no image worker answers a `304`
    /// with it while it is removed: the next job for such a URL downloads in full.
    public func forgetValidators(content sha256: String) async throws {
        let sql = self.engine.dialect.placeholders("DELETE FROM http_validators WHERE content = ?")
        try await self.engine.transaction { session in try await session.execute(sql, [.text(sha256)]) }
    }

    /// Removes the rows of the image `sha256` (the image and its variants) unless an entity points to it again.
    ///
    /// - Returns: Whether they were removed (`false`: an entity names the image again, or it was gone).
    public func removeImage(_ sha256: String) async throws -> Bool {
        let dialect = self.engine.dialect
        let removeImage = dialect.placeholders(
            """
            DELETE FROM images WHERE sha256 = ?
               AND NOT EXISTS (SELECT 1 FROM entity_images e WHERE e.sha256 = ?)
            RETURNING sha256
            """
        )
        let removeVariants = dialect.placeholders("DELETE FROM image_variants WHERE sha256 = ?")
        return try await self.engine.transaction { session in
            let removed = try await session.query(removeImage, [.text(sha256), .text(sha256)])
            guard !removed.isEmpty else { return false }
            try await session.execute(removeVariants, [.text(sha256)])
            return true
        }
    }
}
