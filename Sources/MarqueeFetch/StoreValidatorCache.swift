import Logging
import MarqueeHTTP
import MarqueeStore
import Synchronization

/// The fetch worker's validators in the store's `http_validators` table: kept across restarts and shared by
/// every fetch worker using the same store.
///
/// The cache is lossy by contract (``ValidatorCache``): while the store is unreachable, reads answer "none" (a
/// full download) and writes are dropped, with one warning per outage; the schema is migrated on first use.
final class StoreValidatorCache: ValidatorCache {
    private let catalogue: Store
    private let logger: Logger
    /// Migrated once; `failing` limits the warnings to one per outage.
    private let state = Mutex((migrated: false, failing: false))

    init(store: Store, logger: Logger) {
        self.catalogue = store
        self.logger = logger
    }

    func validators(for key: String) async -> HTTPValidators? {
        await self.attempt {
            try await self.catalogue.validators(for: key).map { HTTPValidators(etag: $0.etag, lastModified: $0.lastModified) }
        } ?? nil
    }

    func store(_ validators: HTTPValidators, for key: String) async {
        await self.attempt {
            try await self.catalogue.storeValidators(etag: validators.etag, lastModified: validators.lastModified, for: key)
        }
    }

    private func attempt<T>(_ body: () async throws -> T) async -> T? {
        do {
            if !self.state.withLock({ $0.migrated }) {
                _ = try await self.catalogue.migrate()
                self.state.withLock { $0.migrated = true }
            }
            let result = try await body()
            if self.state.withLock({ state in defer { state.failing = false }; return state.failing }) {
                self.logger.notice("the validator cache in the store works again")
            }
            return result
        } catch {
            if !self.state.withLock({ state in defer { state.failing = true }; return state.failing }) {
                self.logger.warning(
                    "the validator cache in the store failed: fetching without validators until it works",
                    metadata: ["marquee.error": "\(error)", "marquee.store": "\(self.catalogue.location)"]
                )
            }
            return nil
        }
    }
}
