/// The store's schema: versioned migrations written once for both engines.
///
/// Each migration's SQL uses type placeholders that ``StoreEngine`` fills in (`{int}` is `BIGINT` on PostgreSQL
/// and `INTEGER` on SQLite, `{json}` is `JSONB` or `TEXT` …), so the two engines have the same tables, columns,
/// keys and indexes. Migrations are applied in order on start, each in its own transaction, and recorded in
/// `schema_migrations`; applying them again on an up-to-date store does nothing. A released migration is never
/// edited: a change is a new migration appended here.
enum Schema {
    struct Migration: Sendable {
        var version: Int
        var name: String
        var sql: String
    }

    static let migrations: [Migration] = [
        Migration(version: 1, name: "catalogue", sql: catalogue),
        Migration(version: 2, name: "coordination", sql: coordination),
        Migration(version: 3, name: "kofic catalogue", sql: koficCatalogue),
        Migration(version: 4, name: "image validators", sql: imageValidators),
        Migration(version: 5, name: "movie refreshes", sql: movieRefreshes),
        Migration(version: 6, name: "account data", sql: accountData),
        Migration(version: 7, name: "access-token accounts", sql: accessTokenAccounts),
    ]

    /// The latest version (what an up-to-date store reports).
    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// `schema_migrations` is created outside the numbered migrations: it records them.
    static let migrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version {int} PRIMARY KEY,
            name {text} NOT NULL,
            applied_at {int} NOT NULL
        )
        """

    /// Version 1: every table of the catalogue.
    ///
    /// Conventions: natural keys are the primary keys; every table written from records has `fetched_at`
    /// (epoch ms of the fetch), and an upsert replaces a row only when its `fetched_at` is newer. Facts that only
    /// one endpoint gives (TMDB details, Open Library works) live in their own table with their own `fetched_at`,
    /// so a later list record never erases what details wrote, and an older details record still lands.
    /// `*_norm` columns hold titles folded for matching (``TitleMatching``).
    private static let catalogue = """
        CREATE TABLE movies (
            movie_id {int} PRIMARY KEY,
            original_title {text},
            original_title_norm {text},
            original_language {text},
            release_date {date},
            release_year {int},
            adult {bool},
            video {bool},
            popularity {real},
            vote_average {real},
            vote_count {int},
            genre_ids {json} NOT NULL,
            poster_path {text},
            backdrop_path {text},
            fetched_at {int} NOT NULL
        );
        CREATE INDEX movies_original_title_norm ON movies (original_title_norm);

        CREATE TABLE movie_details (
            movie_id {int} PRIMARY KEY,
            runtime {int},
            budget {int},
            revenue {int},
            imdb_id {text},
            status {text},
            collection_id {int},
            production_countries {json} NOT NULL,
            spoken_languages {json} NOT NULL,
            origin_country {json} NOT NULL,
            fetched_at {int} NOT NULL
        );

        CREATE TABLE movie_genres (
            movie_id {int} NOT NULL,
            genre_id {int} NOT NULL,
            PRIMARY KEY (movie_id, genre_id)
        );
        CREATE INDEX movie_genres_genre ON movie_genres (genre_id);

        CREATE TABLE movie_translations (
            movie_id {int} NOT NULL,
            language {text} NOT NULL,
            title {text},
            title_norm {text},
            overview {text},
            fetched_at {int} NOT NULL,
            PRIMARY KEY (movie_id, language)
        );
        CREATE INDEX movie_translations_title_norm ON movie_translations (title_norm);

        CREATE TABLE movie_translation_details (
            movie_id {int} NOT NULL,
            language {text} NOT NULL,
            tagline {text},
            homepage {text},
            poster_path {text},
            fetched_at {int} NOT NULL,
            PRIMARY KEY (movie_id, language)
        );

        CREATE TABLE genres (
            genre_id {int} NOT NULL,
            language {text} NOT NULL,
            name {text},
            fetched_at {int} NOT NULL,
            PRIMARY KEY (genre_id, language)
        );

        CREATE TABLE reviews (
            review_id {text} PRIMARY KEY,
            movie_id {int} NOT NULL,
            author {text},
            author_name {text},
            username {text},
            avatar_url {text},
            rating {real},
            content {text},
            url {text},
            created_at {text},
            updated_at {text},
            language {text},
            fetched_at {int} NOT NULL
        );
        CREATE INDEX reviews_movie ON reviews (movie_id);

        CREATE TABLE kofic_movies (
            movie_cd {text} PRIMARY KEY,
            title {text},
            title_norm {text},
            title_en {text},
            title_en_norm {text},
            title_original {text},
            production_year {int},
            open_date {date},
            year {int},
            runtime {int},
            production_status {text},
            type {text},
            nations {json} NOT NULL,
            genres {json} NOT NULL,
            directors {json} NOT NULL,
            actors {json} NOT NULL,
            actor_count {int},
            show_types {json} NOT NULL,
            companies {json} NOT NULL,
            audits {json} NOT NULL,
            fetched_at {int} NOT NULL
        );
        CREATE INDEX kofic_movies_title_norm ON kofic_movies (title_norm);
        CREATE INDEX kofic_movies_title_en_norm ON kofic_movies (title_en_norm);

        CREATE TABLE box_office (
            period {text} NOT NULL,
            period_key {text} NOT NULL,
            rank {int} NOT NULL,
            date {date},
            year_week {text},
            show_range {text},
            show_range_start {date},
            show_range_end {date},
            rank_change {int},
            is_new {bool},
            movie_cd {text},
            movie_name {text},
            open_date {date},
            sales_amount {int},
            sales_share {real},
            sales_change {int},
            sales_change_rate {real},
            sales_accumulated {int},
            audience_count {int},
            audience_change {int},
            audience_change_rate {real},
            audience_accumulated {int},
            screen_count {int},
            show_count {int},
            fetched_at {int} NOT NULL,
            PRIMARY KEY (period, period_key, rank)
        );
        CREATE INDEX box_office_date ON box_office (date);
        CREATE INDEX box_office_year_week ON box_office (year_week);
        CREATE INDEX box_office_movie ON box_office (movie_cd);

        CREATE TABLE movie_links (
            movie_cd {text} NOT NULL,
            movie_id {int} NOT NULL,
            method {text} NOT NULL,
            linked_at {int} NOT NULL,
            PRIMARY KEY (movie_cd, movie_id)
        );
        CREATE INDEX movie_links_movie ON movie_links (movie_id);

        CREATE TABLE books (
            book_key {text} PRIMARY KEY,
            work_id {text},
            edition_id {text},
            title {text},
            title_norm {text},
            cover_id {int},
            subjects {json} NOT NULL,
            fetched_at {int} NOT NULL
        );
        CREATE INDEX books_title_norm ON books (title_norm);

        CREATE TABLE book_search_facts (
            book_key {text} PRIMARY KEY,
            first_publish_year {int},
            isbn {json} NOT NULL,
            languages {json} NOT NULL,
            edition_count {int},
            fetched_at {int} NOT NULL
        );

        CREATE TABLE book_work_facts (
            book_key {text} PRIMARY KEY,
            description {text},
            first_publish_date {text},
            author_keys {json} NOT NULL,
            covers {json} NOT NULL,
            fetched_at {int} NOT NULL
        );

        CREATE TABLE authors (
            author_key {text} PRIMARY KEY,
            name {text},
            name_norm {text},
            fetched_at {int} NOT NULL
        );

        CREATE TABLE book_authors (
            book_key {text} NOT NULL,
            position {int} NOT NULL,
            author_key {text},
            name {text},
            name_norm {text},
            PRIMARY KEY (book_key, position)
        );
        CREATE INDEX book_authors_name_norm ON book_authors (name_norm);

        CREATE TABLE images (
            sha256 {text} PRIMARY KEY,
            format {text} NOT NULL,
            width {int} NOT NULL,
            height {int} NOT NULL,
            bytes {int} NOT NULL,
            dominant_color {text},
            blurhash {text},
            fetched_at {int} NOT NULL
        );

        CREATE TABLE image_variants (
            sha256 {text} NOT NULL,
            width {int} NOT NULL,
            format {text} NOT NULL,
            height {int} NOT NULL,
            bytes {int} NOT NULL,
            store_key {text} NOT NULL,
            url {text},
            PRIMARY KEY (sha256, width, format)
        );

        CREATE TABLE entity_images (
            owner {text} NOT NULL,
            role {text} NOT NULL,
            sha256 {text} NOT NULL,
            source_url {text} NOT NULL,
            downloaded_url {text},
            rendition {text},
            fetched_at {int} NOT NULL,
            PRIMARY KEY (owner, role)
        );
        CREATE INDEX entity_images_sha256 ON entity_images (sha256);

        CREATE TABLE http_validators (
            url {text} PRIMARY KEY,
            etag {text},
            last_modified {text},
            updated_at {int} NOT NULL
        );

        CREATE TABLE job_outcomes (
            job_id {text} PRIMARY KEY,
            root_id {text} NOT NULL,
            parent_id {text},
            stage {text} NOT NULL,
            kind {text} NOT NULL,
            attempt {int} NOT NULL,
            outcome {text} NOT NULL,
            tier {int},
            error_kind {text},
            error {text},
            outputs {json} NOT NULL,
            spawned {json} NOT NULL,
            source {text},
            fetched_at {int} NOT NULL
        );
        CREATE INDEX job_outcomes_root ON job_outcomes (root_id);
        CREATE INDEX job_outcomes_parent ON job_outcomes (parent_id);
        """

    /// Version 4: the image stage keeps validators per image URL in `http_validators` too, each with the
    /// SHA-256 of the stored image it validates (`content`; `NULL` for API URLs), so a `304` names the image that
    /// stands (docs/image-store.md, "Revalidation").
    private static let imageValidators = """
        ALTER TABLE http_validators ADD COLUMN content {text};
        CREATE INDEX http_validators_content ON http_validators (content);
        """

    /// Version 2: what the workers of one pipeline share to hold the upstreams' limits together (docs/limits.md).
    ///
    /// Times are microseconds since the epoch on the store's own clock (``SQLDialect/nowMicroseconds``), so
    /// workers on machines whose clocks differ still agree. `coord_members`: the live workers, each seen at its
    /// last heartbeat. `coord_limits`: one row per source and key, the shared schedule of its requests (`tat`,
    /// the time the next request may start), a `Retry-After` block and the slow-down factor after 429s.
    /// `coord_usage`: each worker's figures per limit, written with its heartbeat. `coord_budgets`: daily call
    /// budgets per key and day. `coord_circuits`: the sources paused for the whole pipeline.
    private static let coordination = """
        CREATE TABLE coord_members (
            member {text} PRIMARY KEY,
            stage {text} NOT NULL,
            host {text} NOT NULL,
            started_at {int} NOT NULL,
            seen_at {int} NOT NULL
        );

        CREATE TABLE coord_limits (
            limit_key {text} PRIMARY KEY,
            source {text} NOT NULL,
            key_id {text} NOT NULL,
            host {text} NOT NULL,
            rate {real} NOT NULL,
            factor {real} NOT NULL,
            tat {int} NOT NULL,
            blocked_until {int} NOT NULL,
            throttled_at {int} NOT NULL,
            updated_at {int} NOT NULL
        );

        CREATE TABLE coord_usage (
            limit_key {text} NOT NULL,
            member {text} NOT NULL,
            requests {int} NOT NULL,
            throttled {int} NOT NULL,
            waited_us {int} NOT NULL,
            recent_rate {real} NOT NULL,
            recent_throttled {int} NOT NULL,
            updated_at {int} NOT NULL,
            PRIMARY KEY (limit_key, member)
        );

        CREATE TABLE coord_budgets (
            budget_key {text} NOT NULL,
            day {text} NOT NULL,
            budget {int} NOT NULL,
            spent {int} NOT NULL,
            reset_at {int} NOT NULL,
            updated_at {int} NOT NULL,
            PRIMARY KEY (budget_key, day)
        );

        CREATE TABLE coord_circuits (
            limit_key {text} PRIMARY KEY,
            source {text} NOT NULL,
            reason {text} NOT NULL,
            opened_at {int} NOT NULL,
            opened_by {text} NOT NULL,
            probe_at {int} NOT NULL,
            probes {int} NOT NULL
        );
        """

    /// Version 3: KOFIC's catalogue, one row per movie its movie list shows (`kofic.catalogue` records).
    ///
    /// A table of its own rather than rows of `kofic_movies`: a list entry has none of the info's actors, audits
    /// or runtime, so a later list page must never erase what a movie's info wrote, and a movie listed without
    /// details is still in the store. `nation` and `genre` are KOFIC's representative ones.
    private static let koficCatalogue = """
        CREATE TABLE kofic_catalogue (
            movie_cd {text} PRIMARY KEY,
            title {text},
            title_norm {text},
            title_en {text},
            production_year {int},
            open_date {date},
            year {int},
            type {text},
            production_status {text},
            nation {text},
            genre {text},
            nations {json} NOT NULL,
            genres {json} NOT NULL,
            directors {json} NOT NULL,
            companies {json} NOT NULL,
            fetched_at {int} NOT NULL
        );
        CREATE INDEX kofic_catalogue_title_norm ON kofic_catalogue (title_norm);
        CREATE INDEX kofic_catalogue_year ON kofic_catalogue (year);
        """

    /// Version 5: when each TMDB movie was last refreshed, and why (``RefreshReason``: `list`, `search`,
    /// `backfill`, `change`, `schedule`, `request`), from the `marquee-refresh` header of its `movie` records.
    ///
    /// A table of its own, gated by its own `fetched_at` (the refresh time: when the movie record was fetched)
    /// rather than columns of `movies`: a record without a reason (from a fetch worker older than the header)
    /// then leaves the last known reason alone, and a refresh older than the stored one changes nothing, by the
    /// same rule as every other table. The index on `reason` serves "which movies did the change feed refresh".
    private static let movieRefreshes = """
        CREATE TABLE movie_refreshes (
            movie_id {int} PRIMARY KEY,
            reason {text} NOT NULL,
            fetched_at {int} NOT NULL
        );
        CREATE INDEX movie_refreshes_reason ON movie_refreshes (reason, fetched_at);
        """

    /// The account data: signed-in TMDB users' details, ratings and lists (`tmdb.account`, `tmdb.account.movie`
    /// and `tmdb.account.refresh` records), each keyed by the account's label (the session id is never stored).
    ///
    /// `tmdb_accounts`: one row per account, as `/account` answered. `account_ratings`: the movies each account
    /// rated, with the rating (0.5…10) and when it was given (`rated_at`, TMDB's ISO 8601 time, `NULL` when the
    /// answer had none). `account_lists`: the movies on each account's favourites (`favorite`) and watchlist
    /// (`watchlist`). `as_of` names the refresh that last listed a row (the time of its details answer, epoch ms);
    /// `account_list_refreshes` holds how many entries each list had at each refresh, so a reader can tell the
    /// latest refresh read whole and leave out the rows only older refreshes listed (removed upstream).
    private static let accountData = """
        CREATE TABLE tmdb_accounts (
            account {text} PRIMARY KEY,
            account_id {int} NOT NULL,
            username {text},
            name {text},
            language {text},
            region {text},
            include_adult {bool},
            fetched_at {int} NOT NULL
        );
        CREATE TABLE account_ratings (
            account {text} NOT NULL,
            movie_id {int} NOT NULL,
            account_id {int} NOT NULL,
            rating {real} NOT NULL,
            rated_at {text},
            title {text},
            original_title {text},
            release_date {date},
            as_of {int} NOT NULL,
            fetched_at {int} NOT NULL,
            PRIMARY KEY (account, movie_id)
        );
        CREATE TABLE account_lists (
            account {text} NOT NULL,
            list {text} NOT NULL,
            movie_id {int} NOT NULL,
            account_id {int} NOT NULL,
            title {text},
            original_title {text},
            release_date {date},
            as_of {int} NOT NULL,
            fetched_at {int} NOT NULL,
            PRIMARY KEY (account, list, movie_id)
        );
        CREATE TABLE account_list_refreshes (
            account {text} NOT NULL,
            list {text} NOT NULL,
            as_of {int} NOT NULL,
            total {int} NOT NULL,
            fetched_at {int} NOT NULL,
            PRIMARY KEY (account, list, as_of)
        );
        """

    /// Accounts signed in by a TMDB v4 access token: v4 names an account by its object id (a string, the token's
    /// `sub`), not by v3's number, and has no account details. `account_object_id` joins `account_id` in the three
    /// tables, each row naming its account by one of them, so `account_id` may now be `NULL`.
    ///
    /// SQLite cannot drop a `NOT NULL`: each table is copied into its new form and renamed, on both engines alike.
    private static let accessTokenAccounts = """
        CREATE TABLE tmdb_accounts_v7 (
            account {text} PRIMARY KEY,
            account_id {int},
            account_object_id {text},
            username {text},
            name {text},
            language {text},
            region {text},
            include_adult {bool},
            fetched_at {int} NOT NULL
        );
        INSERT INTO tmdb_accounts_v7 (account, account_id, username, name, language, region, include_adult, fetched_at)
            SELECT account, account_id, username, name, language, region, include_adult, fetched_at FROM tmdb_accounts;
        DROP TABLE tmdb_accounts;
        ALTER TABLE tmdb_accounts_v7 RENAME TO tmdb_accounts;
        CREATE TABLE account_ratings_v7 (
            account {text} NOT NULL,
            movie_id {int} NOT NULL,
            account_id {int},
            account_object_id {text},
            rating {real} NOT NULL,
            rated_at {text},
            title {text},
            original_title {text},
            release_date {date},
            as_of {int} NOT NULL,
            fetched_at {int} NOT NULL,
            PRIMARY KEY (account, movie_id)
        );
        INSERT INTO account_ratings_v7
            (account, movie_id, account_id, rating, rated_at, title, original_title, release_date, as_of, fetched_at)
            SELECT account, movie_id, account_id, rating, rated_at, title, original_title, release_date, as_of,
                   fetched_at
              FROM account_ratings;
        DROP TABLE account_ratings;
        ALTER TABLE account_ratings_v7 RENAME TO account_ratings;
        CREATE TABLE account_lists_v7 (
            account {text} NOT NULL,
            list {text} NOT NULL,
            movie_id {int} NOT NULL,
            account_id {int},
            account_object_id {text},
            title {text},
            original_title {text},
            release_date {date},
            as_of {int} NOT NULL,
            fetched_at {int} NOT NULL,
            PRIMARY KEY (account, list, movie_id)
        );
        INSERT INTO account_lists_v7
            (account, list, movie_id, account_id, title, original_title, release_date, as_of, fetched_at)
            SELECT account, list, movie_id, account_id, title, original_title, release_date, as_of, fetched_at
              FROM account_lists;
        DROP TABLE account_lists;
        ALTER TABLE account_lists_v7 RENAME TO account_lists;
        """
}
