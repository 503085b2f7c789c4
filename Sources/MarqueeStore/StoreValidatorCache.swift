public import Logging
import MarqueeCore
public import MarqueeHTTP
import Synchronization

/// Validators in the store's `http_validators` table: kept across restarts and shared by every worker using the
/// same store — the fetch workers' (API URLs) and the image workers' (image URLs, each with the hash of the
/// image its validators describe in ``HTTPValidators/content``).
///
/// The cache is lossy by contract (``ValidatorCache``), so a job never waits long for it: a call the store does not
/// answer within ``answerTimeout`` (or that the job's cancellation interrupts) counts as "none" (a full download)
/// or a dropped write, and the job goes on while the call ends by itself. Once a call failed, the store is tried
/// again by one call at most every ``retryInterval``; the others answer at once without it. One warning per
/// outage; the schema is migrated on first use.
public final class StoreValidatorCache: ValidatorCache {
    /// The longest a job waits for one call.
    public let answerTimeout: Duration
    /// While the store fails, how often one call tries it again.
    public let retryInterval: Duration

    private struct State {
        var migrated = false
        /// Set from a failure until a call succeeds again.
        var failing = false
        /// While failing: when the next call may try the store.
        var nextTry: ContinuousClock.Instant = .now
    }

    private let catalogue: Store
    private let logger: Logger
    private let state = Mutex(State())
    private let storeCalls = Atomic<Int>(0)

    /// - Parameters:
    ///   - answerTimeout: The longest a job waits for one call. Default: 2 s.
    ///   - retryInterval: While the store fails, how often one call tries it again. Default: 5 s.
    public init(
        store: Store,
        answerTimeout: Duration = .seconds(2),
        retryInterval: Duration = .seconds(5),
        logger: Logger
    ) {
        self.catalogue = store
        self.answerTimeout = answerTimeout
        self.retryInterval = retryInterval
        self.logger = logger
    }

    /// How many calls went to the store (the others answered without it while it failed): for tests.
    public var storeCallCount: Int { self.storeCalls.load(ordering: .relaxed) }

    public func validators(for key: String) async -> HTTPValidators? {
        await self.attempt { catalogue in
            try await catalogue.validators(for: key).map {
                HTTPValidators(etag: $0.etag, lastModified: $0.lastModified, content: $0.content)
            }
        } ?? nil
    }

    public func store(_ validators: HTTPValidators, for key: String) async {
        await self.attempt { catalogue in
            try await catalogue.storeValidators(
                etag: validators.etag,
                lastModified: validators.lastModified,
                content: validators.content,
                for: key
            )
        }
    }

    private func attempt<T: Sendable>(_ body: @escaping @Sendable (Store) async throws -> T) async -> T? {
        let now = ContinuousClock.now
        // Whether this call may try the store, and whether the schema still needs migrating.
        let (mayTry, migrated) = self.state.withLock { state in
            guard state.failing else { return (true, state.migrated) }
            guard now >= state.nextTry else { return (false, state.migrated) }
            state.nextTry = now + self.retryInterval  // this call is the one that tries
            return (true, state.migrated)
        }
        guard mayTry else { return nil }
        self.storeCalls.add(1, ordering: .relaxed)
        let catalogue = self.catalogue
        do {
            let result = try await answer(within: self.answerTimeout) {
                if !migrated { _ = try await catalogue.migrate() }
                return try await body(catalogue)
            }
            let recovered = self.state.withLock { state in
                state.migrated = true
                defer { state.failing = false }
                return state.failing
            }
            if recovered { self.logger.notice("the validator cache in the store works again") }
            return result
        } catch is CancellationError {
            return nil  // the job's cancellation, not the store's failure
        } catch {
            let isFirst = self.state.withLock { state in
                defer {
                    state.failing = true
                    state.nextTry = ContinuousClock.now + self.retryInterval
                }
                return !state.failing
            }
            if isFirst {
                self.logger.warning(
                    "the validator cache in the store failed: fetching without validators until it works",
                    metadata: ["marquee.error": "\(error)", "marquee.store": "\(self.catalogue.location)"]
                )
            }
            return nil
        }
    }
}
