import ArgumentParser
import MarqueeEmulator

import struct Foundation.Data
import class Foundation.FileHandle
import class Foundation.ProcessInfo

/// `marquee-upstream`: the upstream API emulator (TMDB, TMDB images, KOFIC, Kakao, Open Library, Covers) for
/// tests, benchmarks and the offline demo.
@main
struct MarqueeUpstream: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marquee-upstream",
        abstract: "Emulates TMDB, KOFIC, Kakao image search, Open Library and its covers on one local port.",
        discussion: """
            Every upstream lives under its own path prefix: /tmdb/3, /tmdb/4, /tmdb-images/t/p, \
            /kofic/kobisopenapi/webservice/rest, /kakao, /openlibrary, /covers. Responses come from a deterministic \
            catalogue (same --seed, same bytes). On start one JSON line goes to stdout: \
            {"event":"listening","url":"http://127.0.0.1:PORT"}; logs go to stderr. GET/POST /_control changes \
            keys, limits and faults at run time; GET /_stats counts requests, statuses and faults \
            (POST /_stats/reset clears them). See docs/upstream.md.

            Examples:
              marquee-upstream --port 8181
              marquee-upstream --movies 10000 --books 2000 --seed 7
              marquee-upstream --fault-5xx 0.05 --fault-reset 0.01 --fault-truncated-image 0.02
            """
    )

    @Option(help: "Address to bind. Keep the default (loopback only) unless you know why not.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free port (read it from the listening line).")
    var port = 8930

    @Option(help: "Seed of the catalogue: the same seed gives byte-identical responses.")
    var seed: UInt64 = 1

    @Option(help: "Number of movies in the catalogue (10 … 100000).")
    var movies = 1000

    @Option(help: "Number of books in the catalogue (10 … 100000).")
    var books = 500

    @Option(help: "Accepted TMDB key (api_key or Bearer). Default: $TMDB_API_KEY, else marquee-emulator.")
    var tmdbKey: String?

    @Option(
        help:
            "Accepted TMDB user session (session_id= of the account routes). Default: $TMDB_SESSION_ID, else marquee-session."
    )
    var tmdbSession: String?

    @Option(
        help:
            "Accepted TMDB v4 user access token (Authorization: Bearer on the /tmdb/4 account routes). Default: $TMDB_ACCESS_TOKEN, else a built-in token."
    )
    var tmdbAccessToken: String?

    @Option(help: "Accepted KOFIC key (key=). Default: $KOFIC_API_KEY, else marquee-emulator.")
    var koficKey: String?

    @Option(
        help: "Accepted Kakao REST key (Authorization: KakaoAK). Default: $KAKAO_REST_API_KEY, else marquee-emulator."
    )
    var kakaoKey: String?

    @Option(
        help:
            "Requests per second per key and upstream (token bucket, burst = rate); 0 = off. Over it: 429 with Retry-After."
    )
    var rateLimit: Double = 0

    @Option(help: "KOFIC calls per key per emulator day; 0 = off. Over it: HTTP 200 with faultInfo errorCode 320011.")
    var koficDailyQuota = 0

    @Option(help: "Length of an emulator day for the KOFIC quota, in seconds.")
    var quotaDaySeconds = 86400

    @Option(name: .customLong("fault-5xx"), help: "Share (0…1) of upstream requests answered 500, 502 or 503.")
    var fault5xx: Double = 0

    @Option(
        name: .customLong("fault-429"),
        help: "Share (0…1) of upstream requests answered 429 with Retry-After: 1, whatever the rate limit."
    )
    var fault429: Double = 0

    @Option(help: "Share (0…1) of upstream requests never answered (the client must time out).")
    var faultTimeout: Double = 0

    @Option(help: "Share (0…1) of upstream requests whose connection is reset (RST) instead of answered.")
    var faultReset: Double = 0

    @Option(help: "Share (0…1) of 200 JSON responses whose body is cut in the middle or garbled.")
    var faultMalformed: Double = 0

    @Option(help: "Share (0…1) of 200 image responses cut short under a full Content-Length, then closed.")
    var faultTruncatedImage: Double = 0

    @Option(help: "Delay added before every upstream answer, in milliseconds (scheduled, never a sleep).")
    var latencyMs = 0

    @Option(help: "Event-loop threads (default: one per core).")
    var threads: Int?

    @Option(help: "libvips render threads (default: one per core).")
    var renderThreads: Int?

    @Option(help: "Byte budget of the rendered-image cache, in MiB.")
    var imageCacheMb = 256

    @Flag(help: "Print `export VAR=…` lines with the base URLs and keys for --host/--port, and exit.")
    var printEnv = false

    func validate() throws {
        for (name, value) in [
            ("--fault-5xx", self.fault5xx), ("--fault-429", self.fault429), ("--fault-timeout", self.faultTimeout),
            ("--fault-reset", self.faultReset),
            ("--fault-malformed", self.faultMalformed), ("--fault-truncated-image", self.faultTruncatedImage),
        ] where !(0...1).contains(value) {
            throw ValidationError("\(name) must be between 0 and 1")
        }
        guard self.fault5xx + self.fault429 + self.faultTimeout + self.faultReset <= 1 else {
            throw ValidationError("--fault-5xx + --fault-429 + --fault-timeout + --fault-reset must not exceed 1")
        }
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0 … 65535") }
        guard self.rateLimit >= 0, self.koficDailyQuota >= 0, self.latencyMs >= 0, self.quotaDaySeconds > 0 else {
            throw ValidationError("limits, quota, day length and latency must not be negative")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var settings = EmulatorSettings()
        settings.tmdbKeys = [self.tmdbKey ?? environment["TMDB_API_KEY"] ?? EmulatorSettings.defaultKey]
        settings.tmdbSessions = [self.tmdbSession ?? environment["TMDB_SESSION_ID"] ?? EmulatorSettings.defaultSession]
        settings.tmdbAccessTokens = [
            self.tmdbAccessToken ?? environment["TMDB_ACCESS_TOKEN"] ?? EmulatorSettings.defaultAccessToken
        ]
        settings.koficKeys = [self.koficKey ?? environment["KOFIC_API_KEY"] ?? EmulatorSettings.defaultKey]
        settings.kakaoKeys = [self.kakaoKey ?? environment["KAKAO_REST_API_KEY"] ?? EmulatorSettings.defaultKey]
        settings.rateLimit = self.rateLimit
        settings.koficDailyQuota = self.koficDailyQuota
        settings.quotaDaySeconds = self.quotaDaySeconds
        settings.fault5xx = self.fault5xx
        settings.fault429 = self.fault429
        settings.faultTimeout = self.faultTimeout
        settings.faultReset = self.faultReset
        settings.faultMalformed = self.faultMalformed
        settings.faultTruncatedImage = self.faultTruncatedImage
        settings.latencyMs = self.latencyMs

        if self.printEnv {
            let base = "http://\(self.host):\(self.port)"
            for (name, value) in UpstreamURLs(base: base).environment(settings: settings) {
                print("export \(name)='\(value)'")
            }
            return
        }

        let catalogue = Catalogue(CatalogueConfiguration(seed: self.seed, movies: self.movies, books: self.books))
        let renderer = try ImageRenderer(threads: self.renderThreads, cacheBytes: self.imageCacheMb << 20)
        let emulator = Emulator(catalogue: catalogue, settings: settings, renderer: renderer)
        let server = try await EmulatorServer.start(
            emulator: emulator,
            host: self.host,
            port: self.port,
            threads: self.threads
        )
        // Unbuffered: tests read this line through a pipe while the server runs.
        FileHandle.standardOutput.write(Data("{\"event\":\"listening\",\"url\":\"\(server.url)\"}\n".utf8))
        Self.log(
            "marquee-upstream listening on \(server.url): seed \(self.seed), \(catalogue.movieCount) movies, "
                + "\(self.books) books, reference day \(catalogue.referenceDay)"
        )
        try await server.waitUntilClosed()
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("{\"level\":\"info\",\"message\":\"\(message)\"}\n".utf8))
    }
}
