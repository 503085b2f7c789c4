// The settings of each worker executable beyond those every worker shares (Catalogue.swift).

extension Catalogue {
    // MARK: The store and the limits (marquee-fetch, marquee-images, marquee-index, marquee)

    public static let store = Setting<String>(
        "MARQUEE_STORE",
        flag: "store",
        readers: "workers, marquee",
        summary:
            "The store: the catalogue (index), the shared limits and validators (fetch, images), what `query` reads.",
        expected: "sqlite:PATH or postgres://user:password@host:port/database",
        default: "sqlite:./var/marquee.db",
        defaultText: "sqlite:./var/marquee.db",
        isSecret: true,
        parse: SettingParsers.storeLocation
    )

    public static let sharedLimits = Setting<String>(
        "MARQUEE_SHARED_LIMITS",
        flag: "shared-limits",
        readers: "marquee-fetch, marquee-images",
        summary:
            "Where the rate limits are held: store (shared by every worker on MARQUEE_STORE) or local (this process alone).",
        expected: "store or local",
        default: "store",
        defaultText: "store",
        parse: SettingParsers.choice(["store", "local"])
    )

    public static let imageHosts = Setting<[String]>(
        "MARQUEE_IMAGE_HOSTS",
        flag: "image-hosts",
        readers: "marquee-fetch, marquee-images",
        summary:
            "Image hosts allowed in image jobs (exact hosts or *.suffix; empty: the real image hosts: image.tmdb.org, covers.openlibrary.org, Kakao's thumbnail CDNs).",
        expected: "host names, comma-separated, such as image.tmdb.org,*.kakaocdn.net",
        default: [],
        defaultText: "the real image hosts",
        parse: { SettingParsers.list($0) }
    )

    public static let allowPrivateAddresses = Setting<Bool>(
        "MARQUEE_ALLOW_PRIVATE_ADDRESSES",
        flag: "allow-private-addresses",
        readers: "marquee-fetch, marquee-images",
        summary: "Allow URLs that resolve to loopback or private addresses (for the local emulator only).",
        expected: "1 or 0 (true/false, yes/no)",
        default: false,
        defaultText: "0",
        parse: SettingParsers.bool
    )

    // MARK: marquee-fetch

    /// The sources a rate limit may name (MarqueeSources' `Source`; a test keeps the two equal).
    public static let fetchSources = ["tmdb", "kofic", "kakao", "openlibrary"]

    public static let fetchRateLimits = Setting<[String: Double]>(
        "MARQUEE_FETCH_RATE_LIMITS",
        flag: "rate-limits",
        readers: "marquee-fetch",
        summary: "Requests per second per source for the whole pipeline (0: no limit).",
        expected:
            "source=rate pairs, comma-separated, sources tmdb, kofic, kakao, openlibrary, such as tmdb=40,kofic=10",
        default: ["tmdb": 40, "kofic": 10, "kakao": 10, "openlibrary": 1],
        defaultText: "tmdb=40,kofic=10,kakao=10,openlibrary=1",
        parse: SettingParsers.rates(names: fetchSources)
    )

    public static let perSourceConcurrency = Setting<Int>(
        "MARQUEE_FETCH_PER_SOURCE_CONCURRENCY",
        flag: "per-source-concurrency",
        readers: "marquee-fetch",
        summary: "Requests in flight at once per source in this process.",
        expected: "a whole number from 1 to 1000",
        default: 16,
        defaultText: "16",
        parse: SettingParsers.integer(in: 1...1000)
    )

    public static let koficDailyBudget = Setting<Int>(
        "KOFIC_DAILY_BUDGET",
        flag: "kofic-daily-budget",
        readers: "marquee-fetch",
        summary:
            "The KOFIC key's daily call budget for the whole pipeline (0: none); when spent, KOFIC jobs wait in the retry tiers until midnight in Korea.",
        expected: "a whole number from 0 to 100000000",
        default: 3000,
        defaultText: "3000",
        parse: SettingParsers.integer(in: 0...100_000_000)
    )

    public static let validatorCache = Setting<String>(
        "MARQUEE_VALIDATOR_CACHE",
        flag: "validator-cache",
        readers: "marquee-fetch, marquee-images",
        summary:
            "Where ETag/Last-Modified validators are kept: memory (this process) or store (shared in MARQUEE_STORE, kept across restarts).",
        expected: "memory or store",
        default: "memory",
        defaultText: "memory",
        parse: SettingParsers.choice(["memory", "store"])
    )

    public static let probeInterval = Setting<Duration>(
        "MARQUEE_SOURCE_PROBE_INTERVAL",
        flag: "probe-interval",
        readers: "marquee-fetch",
        summary:
            "How long a paused source waits before its first probe; it doubles after each failed probe, up to 12 times this.",
        expected: "a duration from 100ms to 1h, such as 5s",
        default: .seconds(5),
        defaultText: "5s",
        parse: SettingParsers.duration(in: .milliseconds(100) ... .seconds(3600))
    )

    // MARK: The upstream APIs (marquee-fetch)

    public static let tmdbAPIKey = Setting<String>(
        "TMDB_API_KEY",
        readers: "marquee-fetch",
        summary: "TMDB's API key (v3 key or v4 read access token).",
        expected: "one line of text",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.line
    )

    public static let koficAPIKey = Setting<String>(
        "KOFIC_API_KEY",
        readers: "marquee-fetch",
        summary: "The Korean Film Council's API key.",
        expected: "one line of text",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.line
    )

    public static let kakaoAPIKey = Setting<String>(
        "KAKAO_REST_API_KEY",
        readers: "marquee-fetch",
        summary: "Kakao's REST API key (image search for posters).",
        expected: "one line of text",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.line
    )

    public static let tmdbSessionID = Setting<String>(
        "TMDB_SESSION_ID",
        readers: "marquee-fetch",
        summary: "A signed-in TMDB user's session id, for the account TMDB_ACCOUNT names (tmdb.account jobs).",
        expected: "one line of text",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.line
    )

    public static let tmdbAccount = Setting<String>(
        "TMDB_ACCOUNT",
        readers: "marquee-fetch",
        summary: "The label jobs name the account of TMDB_SESSION_ID or TMDB_ACCESS_TOKEN by.",
        expected: "an account label (a-z, 0-9, '.', '_', '-')",
        default: "default",
        defaultText: "default",
        parse: SettingParsers.line
    )

    public static let tmdbSessions = Setting<String>(
        "TMDB_SESSIONS",
        readers: "marquee-fetch",
        summary: "Several signed-in TMDB accounts: label=session pairs, separated by commas or lines.",
        expected: "label=session pairs",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: { $0.contains("=") ? $0 : nil }
    )

    public static let tmdbAccessToken = Setting<String>(
        "TMDB_ACCESS_TOKEN",
        readers: "marquee-fetch",
        summary: "A signed-in TMDB user's v4 access token, for the account TMDB_ACCOUNT names (tmdb.account jobs).",
        expected: "a TMDB v4 user access token (a JWT)",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: SettingParsers.line
    )

    public static let tmdbAccessTokens = Setting<String>(
        "TMDB_ACCESS_TOKENS",
        readers: "marquee-fetch",
        summary:
            "Several TMDB accounts signed in by v4 access tokens: label=token pairs, separated by commas or lines.",
        expected: "label=token pairs",
        default: "",
        defaultText: "none",
        isSecret: true,
        parse: { $0.contains("=") ? $0 : nil }
    )

    public static let tmdbV4BaseURL = Setting<String>(
        "TMDB_V4_BASE_URL",
        readers: "marquee-fetch",
        summary: "Base URL of TMDB's API v4, where access-token accounts are read.",
        expected: "an http or https URL",
        default: "",
        defaultText: "TMDB_BASE_URL with its final /3 as /4",
        parse: SettingParsers.httpURL
    )

    /// The upstreams' base URLs, each with its default.
    public static let baseURLs: [Setting<String>] = [
        ("TMDB_BASE_URL", "TMDB's API", "https://api.themoviedb.org/3"),
        ("TMDB_IMAGE_BASE_URL", "TMDB's images", "https://image.tmdb.org/t/p"),
        ("KOFIC_BASE_URL", "KOFIC's API", "https://www.kobis.or.kr/kobisopenapi/webservice/rest"),
        ("KAKAO_BASE_URL", "Kakao's API", "https://dapi.kakao.com"),
        ("OPENLIBRARY_BASE_URL", "Open Library's API", "https://openlibrary.org"),
        ("OPENLIBRARY_COVERS_BASE_URL", "Open Library's covers", "https://covers.openlibrary.org"),
    ].map { name, what, url in
        Setting<String>(
            name,
            readers: "marquee-fetch",
            summary: "Base URL of \(what) (the emulator's, in tests and `make run`).",
            expected: "an http or https URL",
            default: url,
            defaultText: url,
            parse: SettingParsers.httpURL
        )
    }

    public static let userAgent = Setting<String>(
        "MARQUEE_USER_AGENT",
        readers: "marquee-fetch",
        summary: "The User-Agent of every upstream request.",
        expected: "one line of text",
        default: "marquee/1.0 (catalogue ingestion pipeline)",
        defaultText: "marquee/1.0 (catalogue ingestion pipeline)",
        parse: SettingParsers.line
    )

    /// What `SourceConfiguration.fromEnvironment` reads.
    public static let sources: [any AnySetting] =
        [
            tmdbAPIKey, koficAPIKey, kakaoAPIKey, tmdbSessionID, tmdbAccount, tmdbSessions, tmdbAccessToken,
            tmdbAccessTokens,
        ]
        + baseURLs + [tmdbV4BaseURL, userAgent]

    // MARK: marquee-images

    public static let imageStore = Setting<String>(
        "MARQUEE_IMAGE_STORE",
        flag: "image-store",
        readers: "marquee-images, marquee dashboard, marquee images gc",
        summary: "Where image variants are stored.",
        expected: "file://PATH or s3://bucket/prefix?endpoint=…&region=…",
        default: "file://./var/images",
        defaultText: "file://./var/images",
        parse: { ["file://", "s3://"].contains(where: $0.hasPrefix) ? $0 : nil }
    )

    public static let imageWidths = Setting<[Int]>(
        "MARQUEE_IMAGE_WIDTHS",
        flag: "widths",
        readers: "marquee-images",
        summary: "Variant widths in pixels (never upscaled).",
        expected: "widths from 1 to 4000, comma-separated, such as 92,185,342,500",
        default: [92, 185, 342, 500],
        defaultText: "92,185,342,500",
        parse: SettingParsers.integers(in: 1...4000)
    )

    public static let webpQuality = Setting<Int>(
        "MARQUEE_WEBP_QUALITY",
        flag: "webp-quality",
        readers: "marquee-images",
        summary: "WebP quality of the variants.",
        expected: "a whole number from 1 to 100",
        default: 80,
        defaultText: "80",
        parse: SettingParsers.integer(in: 1...100)
    )

    public static let imageMaxBytes = Setting<Int>(
        "MARQUEE_IMAGE_MAX_BYTES",
        flag: "max-bytes",
        readers: "marquee-images",
        summary: "Largest download in bytes.",
        expected: "a number of bytes from 1 to 1000000000",
        default: 20 * 1024 * 1024,
        defaultText: "20971520",
        parse: SettingParsers.integer(in: 1...1_000_000_000)
    )

    public static let imageMaxPixels = Setting<Int>(
        "MARQUEE_IMAGE_MAX_PIXELS",
        flag: "max-pixels",
        readers: "marquee-images",
        summary: "Largest image in pixels (width × height), checked from the header before decoding.",
        expected: "a whole number from 1 to 1000000000",
        default: 50_000_000,
        defaultText: "50000000",
        parse: SettingParsers.integer(in: 1...1_000_000_000)
    )

    public static let imageOriginals = Setting<Bool>(
        "MARQUEE_IMAGE_ORIGINALS",
        flag: "originals",
        readers: "marquee-images",
        summary: "Download originals instead of the smallest rendition covering the largest width.",
        expected: "1 or 0 (true/false, yes/no)",
        default: false,
        defaultText: "0",
        parse: SettingParsers.bool
    )

    public static let imageRateLimits = Setting<[String: Double]>(
        "MARQUEE_IMAGE_RATE_LIMITS",
        flag: "rate-limits",
        readers: "marquee-images",
        summary:
            "Downloads per second per image host for the whole pipeline (0 or absent: no limit); shared by every image worker on MARQUEE_STORE.",
        expected: "host=rate pairs, comma-separated, such as image.tmdb.org=50",
        default: [:],
        defaultText: "none",
        parse: SettingParsers.rates()
    )

    /// The S3 image store's credentials and region (AWS's own names).
    public static let aws: [Setting<String>] = [
        ("AWS_ACCESS_KEY_ID", "The S3 image store's access key id.", true),
        ("AWS_SECRET_ACCESS_KEY", "The S3 image store's secret key.", true),
        ("AWS_SESSION_TOKEN", "The S3 image store's session token, for temporary credentials.", true),
        (
            "AWS_REGION",
            "The S3 image store's region when its location names none (else AWS_DEFAULT_REGION, else us-east-1).", false
        ),
        (
            "AWS_DEFAULT_REGION", "The S3 image store's region when neither its location nor AWS_REGION names one.",
            false
        ),
    ].map { name, summary, secret in
        Setting<String>(
            name,
            readers: "marquee-images",
            summary: summary,
            expected: "one line of text",
            default: "",
            defaultText: "none",
            isSecret: secret,
            parse: SettingParsers.line
        )
    }

    // MARK: marquee-index

    public static let indexBatchSize = Setting<Int>(
        "MARQUEE_INDEX_BATCH_SIZE",
        flag: "batch-size",
        readers: "marquee-index",
        summary: "The most records in one store transaction.",
        expected: "a whole number from 1 to 10000",
        default: 500,
        defaultText: "500",
        parse: SettingParsers.integer(in: 1...10_000)
    )

    public static let indexBatchWait = Setting<Int>(
        "MARQUEE_INDEX_BATCH_WAIT_MS",
        flag: "batch-wait",
        readers: "marquee-index",
        summary: "How long a record waits for others before a partial batch is written, in milliseconds.",
        expected: "a whole number of milliseconds from 0 to 60000",
        default: 200,
        defaultText: "200",
        parse: SettingParsers.integer(in: 0...60_000)
    )

    public static let indexWriters = Setting<Int>(
        "MARQUEE_INDEX_WRITERS",
        flag: "writers",
        readers: "marquee-index",
        summary: "Batches written at once, each in its own transaction (SQLite writes one at a time).",
        expected: "a whole number from 1 to 16",
        default: 2,
        defaultText: "2",
        parse: SettingParsers.integer(in: 1...16)
    )

    public static let storeConnections = Setting<Int>(
        "MARQUEE_STORE_CONNECTIONS",
        flag: "connections",
        readers: "marquee-index",
        summary: "PostgreSQL connections (ignored for SQLite; at least --writers).",
        expected: "a whole number from 1 to 100",
        default: 4,
        defaultText: "4",
        parse: SettingParsers.integer(in: 1...100)
    )

    /// Each worker executable's own settings, for its `--print-config` and validation at start.
    public static let fetchWorker: [any AnySetting] =
        [
            store, sharedLimits, fetchRateLimits, perSourceConcurrency, koficDailyBudget, validatorCache, probeInterval,
            imageHosts, allowPrivateAddresses,
        ] + sources

    public static let imageWorker: [any AnySetting] =
        [
            store, sharedLimits, imageStore, imageWidths, webpQuality, imageMaxBytes, imageMaxPixels, imageOriginals,
            imageRateLimits, imageHosts, allowPrivateAddresses, validatorCache,
        ] + aws

    public static let indexWorker: [any AnySetting] = [
        store, indexBatchSize, indexBatchWait, indexWriters, storeConnections,
    ]
}
