/// Why a movie was fetched again: what set off the crawl its record came from (the `marquee-refresh` header, the
/// store's `movie_refreshes`; docs/records.md, "Why a movie was refreshed").
///
/// The reason is set on a root job by whoever enqueued it and travels down its lineage: every job and record a job
/// spawns inherits it (``Envelope/child(id:)``). One step changes it: the detail jobs a `tmdb.changes` job spawns
/// are ``change``, whoever enqueued the change feed. A root job without the header gets the reason its kind
/// implies (``implied(by:)``) where the fetch stage handles it.
public enum RefreshReason: String, Hashable, Sendable, CaseIterable {
    /// A TMDB list crawl (`tmdb.list`, `marquee enqueue tmdb-list`).
    case list
    /// A TMDB search (`tmdb.search`, `marquee enqueue tmdb-search`).
    case search
    /// The full backfill from TMDB's daily id export (`marquee enqueue tmdb-export`).
    case backfill
    /// A detail followed from TMDB's change feed (`tmdb.changes`): the movie changed upstream.
    case change
    /// A job the scheduler (`marquee-producer`) produced.
    case schedule
    /// A job enqueued by hand: `marquee enqueue tmdb-movie`, JSON lines, or any other kind with no reason of its
    /// own.
    case request

    /// The reason a root job without one gets from its kind: a list is ``list``, a search ``search``, a page of the
    /// change feed ``change``, anything else ``request``.
    public static func implied(by job: FetchJob) -> RefreshReason {
        switch job {
        case .tmdbList: .list
        case .tmdbSearch: .search
        case .tmdbChanges: .change
        default: .request
        }
    }

    /// The reason of what `job` spawns, when `job` itself was fetched for `self`: the detail refreshes of a
    /// `tmdb.changes` page are ``change``; everything else keeps the job's reason.
    public func spawned(by job: FetchJob) -> RefreshReason {
        if case .tmdbChanges = job { return .change }
        return self
    }
}
