// swift-tools-version:6.2
import PackageDescription

/// Under CI (`CI=true`) a warning in Marquee's own code fails the build; locally it stays a warning.
/// https://github.com/swiftlang/swift-evolution/blob/main/proposals/0443-warning-control.md
let warningsAsErrors: [SwiftSetting] = Context.environment["CI"] == "true" ? [.treatAllWarnings(as: .error)] : []

/// Settings every Swift target shares (STYLE.md (e)).
let swiftSettings: [SwiftSetting] =
    [
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
        .enableUpcomingFeature("ExistentialAny"),
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
        .enableUpcomingFeature("MemberImportVisibility"),
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
        .enableUpcomingFeature("InternalImportsByDefault"),
    ] + warningsAsErrors

let package = Package(
    name: "marquee",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "marquee", targets: ["MarqueeCLI"]),
        .executable(name: "marquee-fetch", targets: ["MarqueeFetch"]),
        .executable(name: "marquee-images", targets: ["MarqueeImages"]),
        .executable(name: "marquee-index", targets: ["MarqueeIndex"]),
        .executable(name: "marquee-upstream", targets: ["MarqueeUpstream"]),
        .executable(name: "marquee-producer", targets: ["MarqueeProducer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // NIOThreadPool (MarqueeKafka's blocking calls, the image store's file I/O); in tests, the loopback HTTP server
        // of MarqueeHTTPTests (connection counting, resets, trickled bodies).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // SHA-256 of image content (the image store's keys, S3 payload hashes).
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        // The store's engines: PostgreSQL (shared, distributed runs) and SQLite (the embedded default).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The dashboard's server-rendered pages (`marquee dashboard`).
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // The producer's schedule file (YAML, with line numbers for its errors).
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Settings: flags, environment and settings file as one layered source (MarqueeSettings).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
    ],
    targets: [
        // librdkafka ≥ 2.1, linked statically from the project-local build (scripts/setup.sh).
        .systemLibrary(
            name: "Crdkafka",
            pkgConfig: "rdkafka-static",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // The one JSON engine: the strict reader (JSONDocument), JSONValue and JSONObject, the writer (JSONWriter).
        .target(
            name: "MarqueeJSON",
            swiftSettings: swiftSettings
        ),
        // Domain values shared by every stage: envelope, job ids, payloads and their strict decoding.
        .target(
            name: "MarqueeCore",
            dependencies: ["MarqueeJSON"],
            swiftSettings: swiftSettings
        ),
        // Source adapters: upstream requests, response parsing into records and follow-up jobs (docs/design.md, "Sources").
        .target(
            name: "MarqueeSources",
            dependencies: ["MarqueeCore", "MarqueeJSON"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MarqueeKafka",
            dependencies: [
                "Crdkafka",
                "MarqueeCore",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                // NIOThreadPool: the one pool of threads for blocking librdkafka calls (docs/concurrency.md).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The stage runtime the fetch, images and index workers share.
        .target(
            name: "MarqueePipeline",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeKafka",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Metrics and health endpoints of a stage process: /metrics (Prometheus), /healthz, /readyz.
        .target(
            name: "MarqueeObservability",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeKafka",
                "MarqueePipeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Every setting declared once (type, default, help) and read from flags, environment, settings file and
        // defaults, on swift-configuration's providers.
        .target(
            name: "MarqueeSettings",
            dependencies: [
                .product(name: "Configuration", package: "swift-configuration")
            ],
            swiftSettings: swiftSettings
        ),
        // What every worker executable shares: options (flags and MARQUEE_* variables), logging, the service group.
        .target(
            name: "MarqueeWorker",
            dependencies: [
                "MarqueeSettings",
                "MarqueeKafka",
                "MarqueePipeline",
                "MarqueeObservability",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // jemalloc (Debian's libjemalloc-dev): the malloc of marquee-fetch and marquee-index, linked by them alone
        // (docs/fetch.md, "Memory allocator").
        .systemLibrary(
            name: "Cjemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // libcurl ≥ 7.88 (Debian's libcurl4-openssl-dev), for MarqueeHTTP.
        .systemLibrary(
            name: "Ccurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Fixed-arity wrappers for libcurl's variadic curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt.
        .target(
            name: "CMarqueeCurl",
            dependencies: ["Ccurl"]
        ),
        // The HTTP client of the fetch and image workers: libcurl multi on one dedicated thread, per-host limits,
        // conditional requests, size caps and the image SSRF policy.
        .target(
            name: "MarqueeHTTP",
            dependencies: [
                "Ccurl",
                "CMarqueeCurl",
                "MarqueeCore",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The content-addressed image store: file:// (atomic, fan-out folders) and s3:// (SigV4 over MarqueeHTTP).
        .target(
            name: "MarqueeImageStore",
            dependencies: [
                "MarqueeCore",
                "MarqueeHTTP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The upstreams' limits held by the whole pipeline: one request schedule per source and key, daily budgets
        // and paused sources, shared by every worker through the store (docs/limits.md); `marquee sources`' report.
        .target(
            name: "MarqueeLimits",
            dependencies: [
                "MarqueeCore",
                "MarqueeStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fetch stage's handler: source adapters + HTTP client → records, image jobs, follow-up fetch jobs.
        .target(
            name: "MarqueeFetchStage",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeHTTP",
                "MarqueeKafka",
                "MarqueeLimits",
                "MarqueePipeline",
                "MarqueeSources",
                "MarqueeStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MarqueeFetch",
            dependencies: [
                "Cjemalloc",
                "MarqueeCore",
                "MarqueeFetchStage",
                "MarqueeHTTP",
                "MarqueeKafka",
                "MarqueeObservability",
                "MarqueePipeline",
                "MarqueeSettings",
                "MarqueeSources",
                "MarqueeStore",
                "MarqueeWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // zlib (Debian's zlib1g-dev), for MarqueeGzip.
        .systemLibrary(
            name: "Czlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // zlib's inflateInit2/deflateInit2 macros as functions (Swift imports no function-like macro).
        .target(
            name: "CMarqueeZlib",
            dependencies: ["Czlib"]
        ),
        // Streaming gzip: a decoder fed in chunks that tells a finished stream from a cut one, and an encoder
        // (TMDB's daily id exports, the emulator's copy of them).
        .target(
            name: "MarqueeGzip",
            dependencies: ["CMarqueeZlib", "Czlib", "MarqueeCore"],
            swiftSettings: swiftSettings
        ),
        // libvips 8.14 (libvips-dev), for the emulator's images and the image worker.
        .systemLibrary(
            name: "Cvips",
            pkgConfig: "marquee-vips",  // libvips' flags without -pthread (scripts/setup.sh)
            providers: [.apt(["libvips-dev"])]
        ),
        // Fixed-arity C wrappers for libvips' variadic calls (Swift cannot call variadic C).
        .target(
            name: "CMarqueeVips",
            dependencies: ["Cvips"]
        ),
        // The upstream API emulator: catalogue, routes, faults, rate limits, images, the NIO server.
        .target(
            name: "MarqueeEmulator",
            dependencies: [
                "MarqueeCore",
                "MarqueeGzip",
                "MarqueeImaging",
                "MarqueeJSON",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The image worker's library: type sniffing, header-only probes and pixel caps, one shrink-on-load decode
        // into WebP/JPEG variants, placeholders (dominant colour, BlurHash); libvips on a bounded thread pool.
        .target(
            name: "MarqueeImaging",
            dependencies: [
                "CMarqueeVips",
                "Cvips",
                "MarqueeCore",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The image stage's handler: download (smallest sufficient rendition) → imaging → image store → records.
        .target(
            name: "MarqueeImageStage",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeHTTP",
                "MarqueeImageStore",
                "MarqueeImaging",
                "MarqueeLimits",
                "MarqueePipeline",
                "MarqueeStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MarqueeImages",
            dependencies: [
                "MarqueeHTTP",
                "MarqueeImageStage",
                "MarqueeImageStore",
                "MarqueeImaging",
                "MarqueeLimits",
                "MarqueeObservability",
                "MarqueePipeline",
                "MarqueeSettings",
                "MarqueeStore",
                "MarqueeWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The catalogue store: one schema on PostgreSQL or SQLite, migrations, batched idempotent upserts of
        // records, the queries of `marquee query`, the shared HTTP validator cache.
        .target(
            name: "MarqueeStore",
            dependencies: [
                "MarqueeCore",
                "MarqueeHTTP",
                "MarqueeJSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The index stage's handler: records gathered into batches, one store transaction per batch.
        .target(
            name: "MarqueeIndexStage",
            dependencies: [
                "MarqueeCore",
                "MarqueePipeline",
                "MarqueeStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MarqueeIndex",
            dependencies: [
                "Cjemalloc",
                "MarqueeIndexStage",
                "MarqueeSettings",
                "MarqueeStore",
                "MarqueeWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The scheduler: schedule files, windows in a time zone, job templates, and each window enqueued once
        // (claims in a one-partition state topic, leader election by consumer group).
        .target(
            name: "MarqueeScheduler",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeKafka",
                "MarqueePipeline",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MarqueeProducer",
            dependencies: [
                "MarqueeCore",
                "MarqueeKafka",
                "MarqueeObservability",
                "MarqueeScheduler",
                "MarqueeSettings",
                "MarqueeWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MarqueeTestSupport",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeKafka",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the operator tools share (the CLI and the dashboard): the pipeline's layout from MARQUEE_*
        // settings, consumer lag and its status, dead letters, worker status, and what `marquee` selects, builds
        // and renders (tables, the catalogue's text, fetch jobs from flags, drain's progress).
        .target(
            name: "MarqueeOperations",
            dependencies: [
                "MarqueeCore",
                "MarqueeGzip",
                "MarqueeJSON",
                "MarqueeSettings",
                "MarqueeHTTP",
                "MarqueeImageStore",
                "MarqueeKafka",
                "MarqueePipeline",
                "MarqueeStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `marquee dashboard`: the web page of lag, workers, dead letters and the store (Hummingbird, Mustache).
        .target(
            name: "MarqueeDashboard",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeHTTP",
                "MarqueeImageStore",
                "MarqueeKafka",
                "MarqueeObservability",
                "MarqueeOperations",
                "MarqueeStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MarqueeCLI",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeLimits",
                "MarqueeDashboard",
                "MarqueeHTTP",
                "MarqueeImageStore",
                "MarqueeKafka",
                "MarqueeObservability",
                "MarqueeOperations",
                "MarqueePipeline",
                "MarqueeSettings",
                "MarqueeStore",
                "MarqueeWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Product "marquee-upstream": argument parsing and wiring around MarqueeEmulator.
        .executableTarget(
            name: "MarqueeUpstream",
            dependencies: [
                "MarqueeEmulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Benchmarks

        .executableTarget(
            name: "KafkaBenchmark",
            dependencies: [
                "MarqueeKafka",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/KafkaBenchmark",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "StageBenchmark",
            dependencies: [
                "MarqueeCore",
                "MarqueeKafka",
                "MarqueePipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/StageBenchmark",
            swiftSettings: swiftSettings
        ),

        // The fetch worker (same code as marquee-fetch) against the emulator: jobs/s, CPU per job, rate accuracy.
        .executableTarget(
            name: "FetchBenchmark",
            dependencies: [
                "MarqueeJSON",
                "Cjemalloc",
                "MarqueeCore",
                "MarqueeFetchStage",
                "MarqueeHTTP",
                "MarqueeKafka",
                "MarqueePipeline",
                "MarqueeSources",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/FetchBenchmark",
            swiftSettings: swiftSettings
        ),

        // The store's batched upserts vs PostgreSQL's COPY of the same rows, and the SQLite figure.
        .executableTarget(
            name: "IndexBenchmark",
            dependencies: [
                "MarqueeCore",
                "MarqueeJSON",
                "MarqueeStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Benchmarks/IndexBenchmark",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "ImagingBenchmark",
            dependencies: [
                "MarqueeImaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/ImagingBenchmark",
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests

        // A consumer-group member run as a separate process by the integration tests (kill -9 scenarios).
        .executableTarget(
            name: "KafkaGroupMember",
            dependencies: [
                "MarqueeKafka",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Tests/Helpers/KafkaGroupMember",
            swiftSettings: swiftSettings
        ),
        // A stage process run by the integration tests (kill -9 and SIGTERM scenarios).
        .executableTarget(
            name: "StageWorker",
            dependencies: [
                "MarqueeCore",
                "MarqueeKafka",
                "MarqueePipeline",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Tests/Helpers/StageWorker",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeCoreTests",
            dependencies: ["MarqueeCore", "MarqueeJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeJSONTests",
            dependencies: ["MarqueeCore", "MarqueeJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeSourcesTests",
            dependencies: ["MarqueeCore", "MarqueeJSON", "MarqueeSources"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeKafkaTests",
            dependencies: ["MarqueeKafka", "MarqueeTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueePipelineTests",
            dependencies: [
                "MarqueeCore", "MarqueeJSON", "MarqueeKafka", "MarqueePipeline",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeFetchStageTests",
            dependencies: [
                "MarqueeCore", "MarqueeFetchStage", "MarqueeHTTP", "MarqueePipeline", "MarqueeSources", "MarqueeStore",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeLimitsTests",
            dependencies: [
                "MarqueeLimits", "MarqueeStore", "MarqueeTestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeImageStageTests",
            dependencies: ["MarqueeHTTP", "MarqueeImageStage", "MarqueeImaging", "MarqueeLimits"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeSettingsTests",
            dependencies: ["MarqueeSettings"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeWorkerTests",
            dependencies: [
                "MarqueeKafka", "MarqueePipeline", "MarqueeWorker", "MarqueeSettings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeHTTPTests",
            dependencies: [
                "MarqueeHTTP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeImageStoreTests",
            dependencies: [
                "MarqueeImageStore", "MarqueeHTTP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeStoreTests",
            dependencies: [
                "MarqueeCore", "MarqueeJSON", "MarqueeSources", "MarqueeStore", "MarqueeTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeSchedulerTests",
            dependencies: ["MarqueeCore", "MarqueeJSON", "MarqueeScheduler"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeOperationsTests",
            dependencies: [
                "MarqueeCore", "MarqueeGzip", "MarqueeJSON", "MarqueeKafka", "MarqueeOperations", "MarqueePipeline",
                "MarqueeStore",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeDashboardTests",
            dependencies: [
                "MarqueeJSON",
                "MarqueeCore", "MarqueeDashboard", "MarqueeKafka", "MarqueeObservability", "MarqueeOperations",
                "MarqueeStore", "MarqueeTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeObservabilityTests",
            dependencies: [
                "MarqueeObservability",
                "MarqueeTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeEmulatorTests",
            dependencies: ["MarqueeEmulator", "MarqueeGzip", "MarqueeTestSupport", "CMarqueeVips", "Cvips"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeGzipTests",
            dependencies: ["MarqueeGzip"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MarqueeImagingTests",
            dependencies: ["MarqueeImaging", "CMarqueeVips", "Cvips"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "MarqueeJSON",
                "MarqueeGzip",
                "CMarqueeVips", "Cvips", "MarqueeCore", "MarqueeDashboard", "MarqueeFetchStage", "MarqueeHTTP",
                "MarqueeImageStage",
                "MarqueeImageStore", "MarqueeImaging", "MarqueeIndexStage", "MarqueeKafka", "MarqueeLimits",
                "MarqueeObservability",
                "MarqueeOperations", "MarqueePipeline", "MarqueeScheduler", "MarqueeSources", "MarqueeStore",
                "MarqueeTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
