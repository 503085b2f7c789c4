import MarqueeJSON
public import NIOCore

/// What the server does with a request.
public enum EmulatorAction: Sendable {
    /// Send this response; with `truncatedTo`, send only that many body bytes (under the full Content-Length),
    /// then close.
    case send(EmulatorResponse, truncatedTo: Int?)
    /// Close the connection abruptly (SO_LINGER 0 → RST).
    case reset
    /// Never answer; keep the connection until the client gives up.
    case hang
}

/// The upstream API emulator: routes a request to its upstream, applies outages, keys, rate limits, quota,
/// conditional requests and faults, and counts everything for `/_stats`.
public final class Emulator: Sendable {
    /// The catalogue behind every response.
    public let catalogue: Catalogue
    let state: EmulatorState
    let renderer: ImageRenderer
    let tmdb: TMDB
    let kofic: KOFIC
    let kakao: Kakao
    let openLibrary: OpenLibrary

    /// An emulator over `catalogue` with `settings`, rendering images with `renderer`.
    public init(catalogue: Catalogue, settings: EmulatorSettings, renderer: ImageRenderer) {
        self.catalogue = catalogue
        self.state = EmulatorState(settings: settings)
        self.renderer = renderer
        self.tmdb = TMDB(catalogue: catalogue)
        self.kofic = KOFIC(catalogue: catalogue)
        self.kakao = Kakao(catalogue: catalogue)
        self.openLibrary = OpenLibrary(catalogue: catalogue)
    }

    /// The current settings.
    public var settings: EmulatorSettings { self.state.settings }

    /// The image a TMDB CDN path stands for (`size` like `w500` or `original`, `file` like `/abc….jpg`), or nil.
    public func tmdbImage(size: String, file: String) -> ImageSpec? {
        guard let decoded = ImagePathCodec.decode(seed: self.catalogue.seed, Substring(file)),
            decoded.index < self.catalogue.movieCount
        else { return nil }
        let original: (width: Int, height: Int)
        switch decoded.kind {
        case .poster: original = (2000, 3000)
        case .backdrop: original = (1920, 1080)
        case .logo: original = (500, 200)
        case .avatar: original = (256, 256)
        }
        let width: Int
        if size == "original" {
            width = original.width
        } else if size.hasPrefix("w"), let requested = Int(size.dropFirst()), requested > 0 {
            width = min(requested, original.width)
        } else if size.hasPrefix("h"), let requested = Int(size.dropFirst()), requested > 0 {
            width = min(original.width, max(1, requested * original.width / original.height))
        } else {
            return nil
        }
        let height = max(1, (width * original.height + original.width / 2) / original.width)
        let seed = StableHash.combine(
            self.catalogue.seed,
            UInt64(decoded.kind.rawValue),
            UInt64(decoded.index),
            UInt64(decoded.variant)
        )
        // One poster in ten is stored turned, with an EXIF orientation that turns it upright again.
        var orientation = 1
        if decoded.kind == .poster, StableHash.unit(seed, 0x0E1F) < 0.1 {
            orientation = StableHash.combine(seed, 0x68) % 2 == 0 ? 6 : 8
        }
        return ImageSpec(seed: seed, width: width, height: height, format: .jpeg, orientation: orientation, quality: 85)
    }

    // MARK: - Handling

    private struct Route {
        let name: String
        let upstream: Upstream
        let key: String
        let handle: @Sendable (any EventLoop) -> EventLoopFuture<EmulatorResponse>
    }

    /// Answers `request`; the future completes on `eventLoop`.
    public func respond(to request: EmulatorRequest, on eventLoop: any EventLoop) -> EventLoopFuture<EmulatorAction> {
        let route = self.route(request)
        let number = self.state.arrived(route: route.name, upstream: route.upstream, key: route.key)
        guard route.upstream != .emulator else {
            return route.handle(eventLoop).map { response in
                self.state.answered(route: route.name, status: response.status)
                return .send(response, truncatedTo: nil)
            }
        }
        let settings = self.state.settings
        let seed = self.catalogue.seed
        let draw = StableHash.unit(seed, 0xFA17, number)
        var action: EventLoopFuture<EmulatorAction>
        if self.state.isInOutage(route.upstream) {
            // Before keys, limits and faults: a service that is down checks nothing.
            let response = Self.serviceUnavailable(route.upstream)
            self.state.answered(route: route.name, status: response.status)
            action = eventLoop.makeSucceededFuture(.send(response, truncatedTo: nil))
        } else if draw < settings.faultReset {
            self.state.fault(.reset)
            action = eventLoop.makeSucceededFuture(.reset)
        } else if draw < settings.faultReset + settings.faultTimeout {
            self.state.fault(.timeout)
            return eventLoop.makeSucceededFuture(.hang)
        } else if draw < settings.faultReset + settings.faultTimeout + settings.fault5xx {
            self.state.fault(.http5xx)
            let response = Self.serverError(number: number, upstream: route.upstream)
            self.state.answered(route: route.name, status: response.status)
            action = eventLoop.makeSucceededFuture(.send(response, truncatedTo: nil))
        } else if draw < settings.faultReset + settings.faultTimeout + settings.fault5xx + settings.fault429 {
            self.state.fault(.http429)
            let response = self.rateLimited(route.upstream, retryAfter: 1)
            self.state.answered(route: route.name, status: response.status)
            action = eventLoop.makeSucceededFuture(.send(response, truncatedTo: nil))
        } else {
            action = route.handle(eventLoop).map { response in
                let final = Self.conditional(response, request)
                var truncatedTo: Int?
                var body = final
                if final.status == 200 {
                    switch final.kind {
                    case .json where StableHash.unit(seed, 0xFA18, number) < settings.faultMalformed:
                        self.state.fault(.malformed)
                        body = Self.malformed(final, number: number)
                    case .image where StableHash.unit(seed, 0xFA19, number) < settings.faultTruncatedImage:
                        self.state.fault(.truncatedImage)
                        truncatedTo = final.body.count / 2
                    default: break
                    }
                }
                self.state.answered(route: route.name, status: body.status)
                if body.kind == .image {
                    self.state.imageAnswered(
                        route.upstream,
                        status: body.status,
                        bodyBytes: truncatedTo ?? body.body.count
                    )
                }
                return .send(body, truncatedTo: truncatedTo)
            }
        }
        if settings.latencyMs > 0 {
            let delay = TimeAmount.milliseconds(Int64(settings.latencyMs))
            action = action.flatMap { action in
                eventLoop.scheduleTask(in: delay) { action }.futureResult
            }
        }
        return action
    }

    private static func serverError(number: UInt64, upstream: Upstream) -> EmulatorResponse {
        switch number % 3 {
        case 0:
            if upstream == .tmdb {
                return TMDB.error(500, code: 11, message: "Internal error: Something went wrong, contact TMDb.")
            }
            return .json(.object([("error", .string("Internal Server Error"))]), status: 500)
        case 1:
            return .text(
                "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
                status: 502,
                contentType: "text/html"
            )
        default:
            return Self.serviceUnavailable(upstream)
        }
    }

    /// A 503 with `Retry-After: 1` in the upstream's shape (TMDB's `status_code` 9 body, else JSON): the
    /// 5xx fault's third kind, and every answer of an upstream in an outage.
    private static func serviceUnavailable(_ upstream: Upstream) -> EmulatorResponse {
        var response =
            upstream == .tmdb
            ? TMDB.error(
                503,
                code: 9,
                message: "Service offline: This service is temporarily offline, try again later."
            )
            : .json(.object([("error", .string("Service Unavailable"))]), status: 503)
        response.headers.append(("Retry-After", "1"))
        return response
    }

    /// A 200 JSON body cut in the middle, or with its middle garbled and its end missing: never valid JSON.
    private static func malformed(_ response: EmulatorResponse, number: UInt64) -> EmulatorResponse {
        var broken = response
        let half = response.body.count / 2
        if number % 2 == 0 {
            broken.body = Array(response.body.prefix(half))
        } else {
            broken.body =
                Array(response.body.prefix(half)) + Array("\u{1}<garbled>\u{FFFD}".utf8)
                + Array(response.body.dropFirst(half + 8).dropLast())
        }
        broken.etag = nil
        return broken
    }

    /// Adds ETag/Last-Modified to a 200 and turns it into a 304 when the client's validators match.
    static func conditional(_ response: EmulatorResponse, _ request: EmulatorRequest) -> EmulatorResponse {
        guard response.status == 200 else { return response }
        var response = response
        let etag = response.etag ?? "\"\(StableHash.digest(response.body))\""
        response.etag = etag
        var notModified = false
        if let match = request.header("if-none-match") {
            notModified = match.split(separator: ",").contains {
                let tag = $0.trimmingCharacters(in: " ")
                return tag == "*" || tag == etag || tag == "W/" + etag
            }
        } else if let since = request.header("if-modified-since"), let lastModified = response.lastModified,
            let date = HTTPDate.parse(since)
        {
            notModified = lastModified <= date
        }
        if notModified {
            response.status = 304
            response.body = []
        }
        return response
    }

    // MARK: - Routing

    private static let listNames: Set<String> = ["now_playing", "popular", "top_rated", "upcoming"]

    private func route(_ request: EmulatorRequest) -> Route {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let host = request.header("host") ?? "127.0.0.1"
        func immediate(
            _ name: String,
            _ upstream: Upstream,
            key: String = "anonymous",
            _ make: @escaping @Sendable () -> EmulatorResponse
        ) -> Route {
            Route(name: name, upstream: upstream, key: key) { $0.makeSucceededFuture(make()) }
        }
        let notFound = immediate("notFound", .emulator) {
            .json(.object([("error", .string("no such route")), ("path", .string(request.path))]), status: 404)
        }
        guard let first = parts.first else { return notFound }
        switch first {
        case "_stats":
            if parts.count == 2, parts[1] == "reset", request.method == "POST" {
                return immediate("stats.reset", .emulator) {
                    self.state.resetStats()
                    return .json(.object([("reset", .bool(true))]))
                }
            }
            return immediate("stats", .emulator) { .json(self.state.statsJSON()) }
        case "_control":
            return immediate("control", .emulator) { self.control(request) }
        case "_files":
            // Test files served as uploaded, whatever they hold (hostile images for the image worker's tests).
            guard parts.count == 2 else { return notFound }
            let name = parts[1]
            if request.method == "PUT" {
                return immediate("files.put", .emulator) {
                    self.state.putFile(
                        name,
                        bytes: request.body,
                        contentType: request.header("content-type") ?? "application/octet-stream"
                    )
                    return .json(.object([("stored", .string(name)), ("bytes", .int(request.body.count))]))
                }
            }
            return immediate("files", .emulator) {
                guard let file = self.state.file(name) else { return Self.imageNotFound }
                return EmulatorResponse(status: 200, contentType: file.contentType, body: file.bytes, kind: .other)
            }
        case "tmdb":
            return self.tmdbRoute(parts, request, host: host, immediate: immediate) ?? notFound
        case "tmdb-files":
            // TMDB's files host: the daily id exports, with no key and no rate limit, as files.tmdb.org has them.
            guard parts.count == 4, parts[1] == "p", parts[2] == "exports" else { return notFound }
            return immediate("tmdb.export", .emulator) { self.tmdb.exports.respond(parts[3]) }
        case "tmdb-images":
            guard parts.count == 5, parts[1] == "t", parts[2] == "p",
                let spec = self.tmdbImage(size: parts[3], file: parts[4])
            else { return immediate("tmdb.image", .tmdbImages) { Self.imageNotFound } }
            return self.imageRoute(
                "tmdb.image",
                .tmdbImages,
                spec: spec,
                lastModified: nil,
                imageName: "tmdb-images/" + parts[4]
            )
        case "kofic":
            guard parts.count == 6, parts[1...3] == ["kobisopenapi", "webservice", "rest"] else { return notFound }
            let name: String
            let handler: @Sendable () -> EmulatorResponse
            switch (parts[4], parts[5]) {
            case ("boxoffice", "searchDailyBoxOfficeList.json"):
                (name, handler) = ("kofic.daily", { self.kofic.daily(request) })
            case ("boxoffice", "searchWeeklyBoxOfficeList.json"):
                (name, handler) = ("kofic.weekly", { self.kofic.weekly(request) })
            case ("movie", "searchMovieInfo.json"):
                (name, handler) = ("kofic.movieInfo", { self.kofic.movieInfo(request) })
            case ("movie", "searchMovieList.json"):
                (name, handler) = ("kofic.movieList", { self.kofic.movieList(request) })
            default: return notFound
            }
            let key = request.query["key"]
            return self.keyed(name, .kofic, key: key, accepted: { $0.koficKeys }, invalid: { _ in KOFIC.invalidKey }) {
                guard self.state.takeKoficCall(key: key ?? "") else { return KOFIC.quotaExceeded }
                return handler()
            }
        case "kakao":
            guard parts == ["kakao", "v2", "search", "image"] else { return notFound }
            let authorization = request.header("authorization")
            let key: String? =
                authorization.flatMap { $0.hasPrefix("KakaoAK ") ? String($0.dropFirst(8)) : nil }
            return self.keyed(
                "kakao.search",
                .kakao,
                key: key,
                accepted: { $0.kakaoKeys },
                invalid: { _ in Kakao.invalidKey(authorization == nil ? nil : key ?? authorization) }
            ) { self.kakao.search(request, host: host) }
        case "kakao-images":
            guard
                let spec = Kakao.image(
                    path: Substring(parts.dropFirst().joined(separator: "/")),
                    seed: self.catalogue.seed
                )
            else { return immediate("kakao.image", .kakaoImages) { Self.imageNotFound } }
            return self.imageRoute(
                "kakao.image",
                .kakaoImages,
                spec: spec,
                lastModified: self.catalogue.referenceDay.epochSeconds,
                imageName: "kakao-images/" + parts.dropFirst().joined(separator: "/")
            )
        case "openlibrary":
            if parts == ["openlibrary", "search.json"] {
                return self.limited("openlibrary.search", .openlibrary) {
                    self.openLibrary.search(request, index: self.catalogue.bookSearchIndex())
                }
            }
            if parts.count == 3, parts[1] == "works", parts[2].hasSuffix(".json") {
                return self.limited("openlibrary.work", .openlibrary) {
                    self.openLibrary.work(String(parts[2].dropLast(5)))
                }
            }
            return notFound
        case "covers":
            guard parts.count == 4, parts[1] == "b",
                let spec = self.openLibrary.cover(kind: Substring(parts[2]), name: Substring(parts[3]))
            else { return immediate("covers", .covers) { .text("Not Found", status: 404) } }
            return self.imageRoute(
                "covers",
                .covers,
                spec: spec,
                lastModified: 1_500_000_000 + Int(spec.seed % 100_000_000),
                imageName: "covers/\(parts[2])/\(OpenLibrary.coverValue(parts[3]))"
            )
        default:
            return notFound
        }
    }

    private static let imageNotFound = EmulatorResponse.text("Not Found", status: 404)

    private func tmdbRoute(
        _ parts: [String],
        _ request: EmulatorRequest,
        host: String,
        immediate: (String, Upstream, String, @escaping @Sendable () -> EmulatorResponse) -> Route
    ) -> Route? {
        if parts.count >= 3, parts[1] == "4" { return self.tmdbV4Route(Array(parts.dropFirst(2)), request) }
        guard parts.count >= 3, parts[1] == "3" else { return nil }
        let rest = Array(parts.dropFirst(2))
        let name: String
        let handler: @Sendable () -> EmulatorResponse
        switch rest.count {
        case 1 where rest[0] == "configuration":
            (name, handler) = ("tmdb.configuration", { self.tmdb.configuration(host: host) })
        case 2 where rest == ["movie", "changes"]:
            let today = self.state.settings.today ?? self.catalogue.referenceDay
            (name, handler) = ("tmdb.changes", { ChangeFeed(catalogue: self.catalogue).feed(request, today: today) })
        case 2 where rest[0] == "movie" && Self.listNames.contains(rest[1]):
            (name, handler) = ("tmdb.list", { self.tmdb.list(rest[1], request) })
        case 2 where rest[0] == "movie":
            guard let id = Int(rest[1]) else {
                (name, handler) = ("tmdb.movie", { TMDB.notFound })
                break
            }
            let settings = self.state.settings
            let padding =
                settings.paddedMovie == id && settings.paddedOverviewBytes > 0 ? settings.paddedOverviewBytes : nil
            let today = settings.today
            (name, handler) = (
                "tmdb.movie", { self.tmdb.details(id, request, paddedOverview: padding, today: today) }
            )
        case 2 where rest == ["search", "movie"]:
            (name, handler) = ("tmdb.search", { self.tmdb.search(request) })
        case 3 where rest[0] == "movie" && rest[2] == "reviews":
            guard let id = Int(rest[1]) else {
                (name, handler) = ("tmdb.reviews", { TMDB.notFound })
                break
            }
            (name, handler) = ("tmdb.reviews", { self.tmdb.reviews(id, request) })
        case 3 where rest == ["genre", "movie", "list"]:
            (name, handler) = ("tmdb.genres", { self.tmdb.genres(request) })
        case 1 where rest[0] == "account", 2 where rest[0] == "account":
            let accountID = rest.count == 2 ? Int(rest[1]) ?? -1 : nil
            (name, handler) = self.accountRoute("tmdb.account", request) { accounts, session in
                accounts.details(session: session, accountID: accountID)
            }
        case 4 where rest[0] == "account" && Self.accountLists.contains(rest[2]) && rest[3] == "movies":
            let accountID = Int(rest[1]) ?? -1
            (name, handler) = self.accountRoute("tmdb.account.list", request) { accounts, session in
                accounts.list(session: session, accountID: accountID, list: rest[2], request)
            }
        default:
            return nil
        }
        var key = request.query["api_key"]
        if key == nil, let authorization = request.header("authorization"), authorization.hasPrefix("Bearer ") {
            key = String(authorization.dropFirst(7))
        }
        return self.keyed(name, .tmdb, key: key, accepted: { $0.tmdbKeys }, invalid: { _ in TMDB.invalidKey }, handler)
    }

    /// A route of TMDB's v4 account API (`rest` is the path after `/tmdb/4`), or `nil` for an unknown path.
    ///
    /// The bearer token stands for the key: a missing or unknown one is TMDB's 401 `status_code` 7 and the rate
    /// limit is counted per token, as for the v3 key. Then, with the settings of the request's time, a revoked
    /// token or one whose subject is not the path's account object id is 401 `status_code` 3 (``V4Accounts``).
    private func tmdbV4Route(_ rest: [String], _ request: EmulatorRequest) -> Route? {
        guard rest.count >= 3, rest[0] == "account" else { return nil }
        let accountObjectID = rest[1]
        let v4 = V4Accounts(accounts: Accounts(catalogue: self.catalogue))
        let name: String
        let body: @Sendable (String) -> EmulatorResponse
        switch rest.count {
        case 3 where rest[2] == "lists":
            (name, body) = ("tmdb.v4.account.lists", { subject in v4.lists(subject: subject, request) })
        case 4 where rest[2] == "movie" && V4Accounts.movieLists[rest[3]] != nil:
            let list = rest[3]
            (name, body) = ("tmdb.v4.account.list", { subject in v4.movies(subject: subject, list: list, request) })
        default:
            return nil
        }
        let token = V4Accounts.token(request)
        return self.keyed(
            name,
            .tmdb,
            key: token,
            accepted: { V4Accounts.known($0) },
            invalid: { _ in TMDB.invalidKey }
        ) {
            switch V4Accounts.check(token ?? "", accountObjectID: accountObjectID, settings: self.state.settings) {
            case .accepted(let subject): body(subject)
            case .refused(let response): response
            }
        }
    }

    /// The account lists ``Accounts`` serves.
    private static let accountLists: Set<String> = ["rated", "favorite", "watchlist"]

    /// A signed-in account's route: the session is checked (after the key) with the settings of the request's
    /// time, then `body` answers for the session's account.
    private func accountRoute(
        _ name: String,
        _ request: EmulatorRequest,
        _ body: @escaping @Sendable (Accounts, String) -> EmulatorResponse
    ) -> (String, @Sendable () -> EmulatorResponse) {
        let settings = self.state.settings
        let accounts = Accounts(catalogue: self.catalogue)
        return (
            name,
            {
                switch Accounts.check(request, settings: settings) {
                case .accepted(let session): body(accounts, session)
                case .refused(let response): response
                }
            }
        )
    }

    /// A keyed route: 401 (the upstream's shape) for a missing or wrong key, then the rate limit, then `handler`.
    private func keyed(
        _ name: String,
        _ upstream: Upstream,
        key: String?,
        accepted: @escaping @Sendable (EmulatorSettings) -> [String],
        invalid: @escaping @Sendable (String?) -> EmulatorResponse,
        _ handler: @escaping @Sendable () -> EmulatorResponse
    ) -> Route {
        let fingerprint = key.map(KeyFingerprint.of) ?? "missing"
        return Route(name: name, upstream: upstream, key: fingerprint) { eventLoop in
            guard let key, accepted(self.state.settings).contains(key) else {
                return eventLoop.makeSucceededFuture(invalid(key))
            }
            if let retryAfter = self.state.takeToken(upstream: upstream, key: fingerprint) {
                return eventLoop.makeSucceededFuture(self.rateLimited(upstream, retryAfter: retryAfter))
            }
            return eventLoop.makeSucceededFuture(handler())
        }
    }

    /// A keyless route with the rate limit (per upstream, all clients together).
    private func limited(
        _ name: String,
        _ upstream: Upstream,
        _ handler: @escaping @Sendable () -> EmulatorResponse
    )
        -> Route
    {
        Route(name: name, upstream: upstream, key: "anonymous") { eventLoop in
            if let retryAfter = self.state.takeToken(upstream: upstream, key: "anonymous") {
                return eventLoop.makeSucceededFuture(self.rateLimited(upstream, retryAfter: retryAfter))
            }
            return eventLoop.makeSucceededFuture(handler())
        }
    }

    /// An image route; `imageName` names the image for `changeImages` (``ImageRevisions``): its current revision is
    /// the one served.
    private func imageRoute(
        _ name: String,
        _ upstream: Upstream,
        spec: ImageSpec,
        lastModified: Int?,
        imageName: String
    ) -> Route {
        let limitedUpstream = upstream == .covers
        return Route(name: name, upstream: upstream, key: "anonymous") { eventLoop in
            if limitedUpstream, let retryAfter = self.state.takeToken(upstream: upstream, key: "anonymous") {
                return eventLoop.makeSucceededFuture(self.rateLimited(upstream, retryAfter: retryAfter))
            }
            let revision = self.state.imageRevision(imageName)
            let revised = ImageRevisions.spec(spec, revision: revision)
            let modified = ImageRevisions.lastModified(
                lastModified ?? (1_600_000_000 + Int(spec.seed % 60_000_000)),
                revision: revision
            )
            return self.renderer.image(revised, on: eventLoop).map { image in
                EmulatorResponse(
                    status: 200,
                    contentType: image.contentType,
                    body: image.bytes,
                    kind: .image,
                    lastModified: modified,
                    etag: image.etag
                )
            }.recover { error in
                .text("image rendering failed: \(error)", status: 500)
            }
        }
    }

    private func rateLimited(_ upstream: Upstream, retryAfter: Int) -> EmulatorResponse {
        let limit = self.state.settings.rateLimit
        var response: EmulatorResponse
        switch upstream {
        case .tmdb:
            response = TMDB.error(
                429,
                code: 25,
                message: "Your request count (\(Int(limit) + 1)) is over the allowed limit of \(Int(limit))."
            )
        case .kofic:
            response = KOFIC.fault("320012", "요청 횟수가 허용량을 초과하였습니다.", status: 429)
        case .kakao:
            response = Kakao.error(429, "RequestThrottled", "API limit has been exceeded.")
        default:
            response = .text("Too Many Requests", status: 429)
        }
        response.headers.append(("Retry-After", String(retryAfter)))
        return response
    }

    private func control(_ request: EmulatorRequest) -> EmulatorResponse {
        if request.method == "POST" {
            guard case .object(let object)? = JSONDocument.parse(request.body, refusesDuplicateKeys: true) else {
                return .json(.object([("error", .string("the body must be a JSON object"))]), status: 400)
            }
            do {
                return .json(try self.state.control(object))
            } catch {
                return .json(.object([("error", .string(error.reason))]), status: 400)
            }
        }
        return .json(self.state.controlJSON())
    }
}
