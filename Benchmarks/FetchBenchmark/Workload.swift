import ArgumentParser
import Logging
import MarqueeCore
import MarqueeHTTP
import MarqueeJSON
import MarqueeSources

/// The kinds of job a run is made of.
enum WorkloadKind: String, ExpressibleByArgument, CaseIterable {
    /// `tmdb.movie` with reviews and images appended (records: movie, localized movie, genres, reviews; image jobs).
    case detail
    /// `tmdb.list` pages following details, reviews and images (records and 20 follow-up detail jobs a page).
    case list
    /// `tmdb.search` pages, full ones only, following the same way.
    case search
}

/// Builds a workload of distinct jobs from what the emulator serves.
///
/// The emulator's movie ids are sparse, so they are read from its `popular` list; list and search pages are only
/// full ones (20 results), found from each list's or query's `total_results`. Every job is distinct (no URL twice),
/// so the worker's validator cache never turns a fetch into a 304. Deterministic for a given emulator seed, so
/// `urls` and `run` build the same jobs.
enum Workload {
    static let languages = ["en-US", "ko-KR", "ja-JP"]
    /// Substrings that most titles contain (the emulator searches every language's title).
    static let queries = ["e", "a", "o", "i", "n", "r", "s", "t"]
    static let pageSize = 20

    /// - Parameter rate: A limit for the requests made to find the jobs (against an emulator that limits too).
    static func jobs(
        _ kind: WorkloadKind,
        count: Int,
        sources: SourceConfiguration,
        rate: Double? = nil,
        logger: Logger
    ) async throws -> [FetchJob] {
        let client = try DiscoveryClient(sources: sources, rate: rate, logger: logger)
        do {
            let jobs = try await self.jobs(kind, count: count, client: client)
            await client.shutdown()
            return jobs
        } catch {
            await client.shutdown()
            throw error
        }
    }

    private static func jobs(_ kind: WorkloadKind, count: Int, client: DiscoveryClient) async throws -> [FetchJob] {
        let crawl = Follow(details: true, reviews: true, images: true)
        var jobs: [FetchJob] = []
        switch kind {
        case .detail:
            let ids = try await client.movieIDs(upTo: count)
            outer: for language in self.languages {
                for id in ids {
                    guard jobs.count < count else { break outer }
                    jobs.append(.tmdbMovie(id: id, language: language, follow: Follow(reviews: true, images: true)))
                }
            }
        case .list:
            outer: for language in self.languages {
                for list in [FetchJob.TMDBList.popular, .topRated, .nowPlaying, .upcoming] {
                    let first = FetchJob.tmdbList(list: list, page: 1, language: language, region: nil, follow: crawl)
                    let pages = try await client.fullPages(of: first)
                    guard pages > 0 else { continue }
                    for page in 1...pages {
                        guard jobs.count < count else { break outer }
                        jobs.append(.tmdbList(list: list, page: page, language: language, region: nil, follow: crawl))
                    }
                }
            }
        case .search:
            outer: for language in self.languages {
                for query in self.queries {
                    let first = FetchJob.tmdbSearch(query: query, page: 1, language: language, year: nil, follow: crawl)
                    let pages = try await client.fullPages(of: first)
                    guard pages > 0 else { continue }
                    for page in 1...pages {
                        guard jobs.count < count else { break outer }
                        jobs.append(.tmdbSearch(query: query, page: page, language: language, year: nil, follow: crawl))
                    }
                }
            }
        }
        guard jobs.count == count else {
            throw ValidationError(
                "the emulator's catalogue holds only \(jobs.count) distinct \(kind.rawValue) jobs; start it with more --movies"
            )
        }
        return jobs
    }
}

/// Reads list pages from the emulator before a run (its own HTTP client, shut down before the clock starts).
struct DiscoveryClient {
    let adapters: SourceAdapters
    let fetcher: HTTPFetcher

    init(sources: SourceConfiguration, rate: Double?, logger: Logger) throws {
        var http = HTTPFetcherConfiguration()
        http.allowsPrivateAddresses = true
        if let rate { http.defaultHostLimit = HostLimit(requestsPerSecond: rate, burst: 1) }
        self.adapters = SourceAdapters(configuration: sources)
        self.fetcher = try HTTPFetcher(configuration: http, logger: logger)
    }

    func shutdown() async { await self.fetcher.shutdown() }

    /// The JSON object the emulator answers to `job`'s request.
    func page(_ job: FetchJob) async throws -> JSONObject {
        let request = try self.adapters.request(for: job)
        var fetch = FetchRequest(
            url: request.url,
            headers: request.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
            purpose: .api
        )
        fetch.isConditional = false
        let response = try await self.fetcher.fetch(fetch)
        guard response.status == 200, case .object(let object) = try JSONValue.parse(response.body) else {
            throw ValidationError("\(request.redactedURL) answered \(response.status)")
        }
        return object
    }

    /// The number of full pages (20 results) of a paged job, at most TMDB's 500.
    func fullPages(of job: FetchJob) async throws -> Int64 {
        let object = try await self.page(job)
        guard case .integer(let total) = object["total_results"] else { return 0 }
        return min(total / Int64(Workload.pageSize), TMDBAdapter.maxPage)
    }

    /// Movie ids in the order of the `popular` list, up to `limit` (fewer when the catalogue is smaller).
    func movieIDs(upTo limit: Int) async throws -> [Int64] {
        var ids: [Int64] = []
        var page: Int64 = 1
        while ids.count < limit, page <= TMDBAdapter.maxPage {
            let object = try await self.page(
                .tmdbList(list: .popular, page: page, language: "en-US", region: nil, follow: .none)
            )
            guard case .array(let results) = object["results"], !results.isEmpty else { break }
            for case .object(let movie) in results {
                if case .integer(let id) = movie["id"] { ids.append(id) }
            }
            page += 1
        }
        return Array(ids.prefix(limit))
    }
}
