import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) for the fetcher's tests.
///
/// Routes (query parameters in brackets):
/// - `/bytes?n=N[&chunked=1]`: N bytes (`i % 251`), with Content-Length or chunked.
/// - `/gzip`: ``TestHTTPServer/gzipPlain`` gzip-encoded when the request accepts gzip.
/// - `/etag`: ETag `"v1"` and Last-Modified; `304` when If-None-Match matches.
/// - `/status?code=C[&retry=R]`: status C with an optional Retry-After R.
/// - `/delay?ms=M`: answers after M ms.
/// - `/slow`: headers, then one byte every 100 ms, forever.
/// - `/hang`: never answers.
/// - `/redirect?n=K`: `302` to `/redirect?n=K-1`, `200` at 0; `/redirect-to?url=U`: `302` to U.
/// - `/reset`: resets the connection (RST).
/// - `/echo`: the request headers, one `name: value` line each.
/// - `/upload`: `201` with `stored N` (N: the request body's size); any method.
///
/// A `HEAD` request gets the route's status and headers (with its `Content-Length`) and no body. Each request's
/// method and body are recorded by path.
final class TestHTTPServer: Sendable {
    /// What the server observed; tests await conditions on it instead of sleeping.
    struct Snapshot: Sendable {
        var connectionsOpened = 0
        var connectionsClosed = 0
        var requests: [String: Int] = [:]
        var inFlight = 0
        var peakInFlight = 0
        var lastHeaders: [String: [(String, String)]] = [:]
        var notModified = 0
        var lastMethod: [String: String] = [:]
        var lastBody: [String: [UInt8]] = [:]

        var totalRequests: Int { self.requests.values.reduce(0, +) }
    }

    private struct State {
        var snapshot = Snapshot()
        var waiters: [(predicate: @Sendable (Snapshot) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// `"marquee "` × 12 500 (100 000 bytes).
    static let gzipPlain: [UInt8] = Array(String(repeating: "marquee ", count: 12_500).utf8)
    /// ``gzipPlain`` compressed by gzip.
    static let gzipCompressed: [UInt8] =
        [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xed, 0xc5, 0xa1, 0x0d, 0x00, 0x30, 0x08,
            0x00, 0xb0, 0x57, 0xf6, 0x1a, 0x02, 0x89, 0x80, 0x64, 0xff, 0xf3, 0x06, 0xa2, 0x35, 0xad, 0x98, 0xfe,
            0x99, 0xaf, 0x6c,
        ] + Array(repeating: [0xdb, 0xb6, 0x6d] as [UInt8], count: 48).flatMap { $0 }
        + [0x9f, 0x7b, 0x01, 0xa8, 0x8b, 0xf1, 0x97, 0xa0, 0x86, 0x01, 0x00]

    private let state = Mutex(State())
    private let channel: any Channel
    /// The listening port.
    let port: Int

    /// `http://127.0.0.1:<port>`.
    var baseURL: String { "http://127.0.0.1:\(self.port)" }

    /// The default rate-limit bucket of requests to this server.
    var hostKey: String { "127.0.0.1:\(self.port)" }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    static func start() async throws -> TestHTTPServer {
        let box = Mutex<TestHTTPServer?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let server = box.withLock({ $0 }) else { return }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Handler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = TestHTTPServer(channel: channel, port: channel.localAddress!.port!)
        box.withLock { $0 = server }
        return server
    }

    func close() async throws {
        try await self.channel.close()
    }

    var snapshot: Snapshot { self.state.withLock { $0.snapshot } }

    /// Returns once `predicate` holds for the server's observations.
    func wait(until predicate: @escaping @Sendable (Snapshot) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = self.state.withLock { state in
                if predicate(state.snapshot) { return true }
                state.waiters.append((predicate, continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }

    fileprivate func update(_ change: (inout Snapshot) -> Void) {
        let ready = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state.snapshot)
            state.snapshot.peakInFlight = max(state.snapshot.peakInFlight, state.snapshot.inFlight)
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(state.snapshot) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}

private final class Handler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: TestHTTPServer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var isHead = false
    private var answering = false

    init(server: TestHTTPServer) { self.server = server }

    func channelActive(context: ChannelHandlerContext) {
        self.server.update { $0.connectionsOpened += 1 }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let wasAnswering = self.answering
        self.server.update { snapshot in
            snapshot.connectionsClosed += 1
            if wasAnswering { snapshot.inFlight -= 1 }
        }
        self.answering = false
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = []
        case .body(let buffer): self.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            let (path, query) = Self.split(head.uri)
            let headers = head.headers.map { ($0.name.lowercased(), $0.value) }
            let body = self.body
            self.body = []
            self.answering = true
            self.isHead = head.method == .HEAD
            self.server.update { snapshot in
                snapshot.requests[path, default: 0] += 1
                snapshot.inFlight += 1
                snapshot.lastHeaders[path] = headers
                snapshot.lastMethod[path] = head.method.rawValue
                snapshot.lastBody[path] = body
            }
            self.route(context: context, path: path, query: query, head: head)
        }
    }

    private func route(context: ChannelHandlerContext, path: String, query: [String: String], head: HTTPRequestHead) {
        switch path {
        case "/bytes":
            let count = Int(query["n"] ?? "0") ?? 0
            let body = (0..<count).map { UInt8($0 % 251) }
            self.respond(context: context, body: body, chunked: query["chunked"] == "1")
        case "/gzip":
            if head.headers["accept-encoding"].joined().contains("gzip") {
                self.respond(
                    context: context,
                    headers: [("content-encoding", "gzip")],
                    body: TestHTTPServer.gzipCompressed
                )
            } else {
                self.respond(context: context, body: TestHTTPServer.gzipPlain)
            }
        case "/etag":
            let validators = [("etag", "\"v1\""), ("last-modified", "Wed, 21 Oct 2015 07:28:00 GMT")]
            if head.headers["if-none-match"].first == "\"v1\"" {
                self.server.update { $0.notModified += 1 }
                self.respond(context: context, status: .notModified, headers: validators, body: [])
            } else {
                self.respond(context: context, headers: validators, body: Array("fresh".utf8))
            }
        case "/status":
            let code = Int(query["code"] ?? "200") ?? 200
            let headers = query["retry"].map { [("retry-after", $0)] } ?? []
            self.respond(
                context: context,
                status: .init(statusCode: code),
                headers: headers,
                body: Array("status".utf8)
            )
        case "/delay":
            let ms = Int64(query["ms"] ?? "0") ?? 0
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(ms)) {
                let (handler, context) = loopBound.value
                handler.respond(context: context, body: Array("delayed".utf8))
            }
        case "/slow":
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "content-length", value: "1000000")
            context.writeAndFlush(self.wrapOutboundOut(.head(head)), promise: nil)
            self.trickle(context: context)
        case "/hang":
            break
        case "/redirect":
            let remaining = Int(query["n"] ?? "0") ?? 0
            if remaining > 0 {
                self.respond(
                    context: context,
                    status: .found,
                    headers: [("location", "/redirect?n=\(remaining - 1)")],
                    body: Array("moved".utf8)
                )
            } else {
                self.respond(context: context, body: Array("done".utf8))
            }
        case "/redirect-to":
            self.respond(context: context, status: .found, headers: [("location", query["url"] ?? "/")], body: [])
        case "/reset":
            let channel = context.channel
            if let provider = channel as? any SocketOptionProvider {
                provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
        case "/upload":
            let size = self.server.snapshot.lastBody[path]?.count ?? 0
            self.respond(context: context, status: .created, body: Array("stored \(size)".utf8))
        case "/echo":
            let lines = head.headers.map { "\($0.name.lowercased()): \($0.value)\n" }.joined()
            self.respond(context: context, body: Array(lines.utf8))
        default:
            self.respond(context: context, status: .notFound, body: Array("not found".utf8))
        }
    }

    private func trickle(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var buffer = context.channel.allocator.buffer(capacity: 1)
        buffer.writeInteger(UInt8(ascii: "x"))
        context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(100)) {
            let (handler, context) = loopBound.value
            handler.trickle(context: context)
        }
    }

    private func respond(
        context: ChannelHandlerContext,
        status: HTTPResponseStatus = .ok,
        headers: [(String, String)] = [],
        body: [UInt8],
        chunked: Bool = false
    ) {
        guard self.answering else { return }
        var head = HTTPResponseHead(version: .http1_1, status: status)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if chunked {
            head.headers.add(name: "transfer-encoding", value: "chunked")
        } else if status != .notModified {
            head.headers.add(name: "content-length", value: "\(body.count)")
        }
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if self.isHead {
            // The headers of the GET, no body.
        } else if chunked {
            var offset = 0
            while offset < body.count {
                let end = min(offset + 1000, body.count)
                let buffer = context.channel.allocator.buffer(bytes: body[offset..<end])
                context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                offset = end
            }
        } else if !body.isEmpty {
            context.write(
                self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))),
                promise: nil
            )
        }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        self.answering = false
        self.server.update { $0.inFlight -= 1 }
    }

    private static func split(_ uri: String) -> (String, [String: String]) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var query: [String: String] = [:]
        for item in uri[uri.index(after: mark)...].split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1)
            let value = parts.count > 1 ? String(parts[1]) : ""
            query[String(parts[0])] = value.removingPercentEncodingLite
        }
        return (String(uri[..<mark]), query)
    }
}

extension String {
    /// Percent-decoding of test query values (ASCII only).
    fileprivate var removingPercentEncodingLite: String {
        var bytes: [UInt8] = []
        var iterator = self.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
