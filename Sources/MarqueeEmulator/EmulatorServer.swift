import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The emulator's HTTP/1.1 server (SwiftNIO): keep-alive, and the low-level control the faults need (resets,
/// truncated bodies, requests never answered).
public final class EmulatorServer: Sendable {
    /// The emulator answering the requests.
    public let emulator: Emulator
    /// The port it listens on (the real one when started with port 0).
    public let port: Int
    /// The host it is bound to.
    public let host: String
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    private init(emulator: Emulator, host: String, port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup)
    {
        self.emulator = emulator
        self.host = host
        self.port = port
        self.channel = channel
        self.group = group
    }

    /// `http://host:port`.
    public var url: String { "http://\(self.host.contains(":") ? "[\(self.host)]" : self.host):\(self.port)" }

    /// Binds and starts serving.
    ///
    /// - Parameters:
    ///   - emulator: What answers.
    ///   - host: The address to bind (default 127.0.0.1: loopback only).
    ///   - port: The port; 0 picks a free one.
    ///   - threads: Event loops (default: one per core).
    /// - Throws: When the address cannot be bound.
    public static func start(
        emulator: Emulator,
        host: String = "127.0.0.1",
        port: Int = 8930,
        threads: Int? = nil
    )
        async throws -> EmulatorServer
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads ?? System.coreCount)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(EmulatorHTTPHandler(emulator: emulator))
                    }
                }
                .bind(host: host, port: port).get()
            let bound = channel.localAddress?.port ?? port
            return EmulatorServer(emulator: emulator, host: host, port: bound, channel: channel, group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Waits until the server's socket is closed.
    public func waitUntilClosed() async throws {
        try await self.channel.closeFuture.get()
    }

    /// Stops listening, closes every connection and stops the event loops.
    public func shutdown() async throws {
        try? await self.channel.close()
        try await self.group.shutdownGracefully()
    }
}

/// One connection: collects a request, asks the ``Emulator``, carries out its ``EmulatorAction``.
final class EmulatorHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let emulator: Emulator
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// A request on this connection is never answered: ignore everything that follows.
    private var isHung = false

    init(emulator: Emulator) { self.emulator = emulator }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = []
        case .body(var buffer):
            if self.body.count < 1 << 20, let bytes = buffer.readBytes(length: buffer.readableBytes) {
                self.body += bytes
            }
        case .end:
            guard let head = self.head, !self.isHung else { return }
            self.head = nil
            let request = EmulatorRequest(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) },
                body: self.body
            )
            self.body = []
            self.emulator.respond(to: request, on: context.eventLoop)
                .hop(to: context.eventLoop)
                .assumeIsolated()
                .whenComplete { result in
                    switch result {
                    case .success(let action):
                        self.perform(action, head: head, context: context)
                    case .failure(let error):
                        self.perform(
                            .send(.text("internal error: \(error)", status: 500), truncatedTo: nil),
                            head: head,
                            context: context
                        )
                    }
                }
        }
    }

    private func perform(_ action: EmulatorAction, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        switch action {
        case .hang:
            self.isHung = true
        case .reset:
            // SO_LINGER {on, 0} makes close() send RST instead of FIN.
            if let provider = context.channel as? any SocketOptionProvider {
                provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).hop(to: context.eventLoop).assumeIsolated()
                    .whenComplete { _ in context.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        case .send(let response, let truncatedTo):
            let keepAlive = head.isKeepAlive && truncatedTo == nil
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: response.contentType)
            if response.status != 304 { headers.add(name: "Content-Length", value: String(response.body.count)) }
            if let etag = response.etag { headers.add(name: "ETag", value: etag) }
            if let lastModified = response.lastModified {
                headers.add(name: "Last-Modified", value: HTTPDate.format(lastModified))
            }
            for (name, value) in response.headers { headers.add(name: name, value: value) }
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            let responseHead = HTTPResponseHead(
                version: head.version,
                status: HTTPResponseStatus(statusCode: response.status),
                headers: headers
            )
            context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)
            let sendsBody = head.method != .HEAD && !response.body.isEmpty
            if let truncatedTo {
                // The full length is announced; only part of it comes, then the connection closes.
                if sendsBody {
                    let buffer = context.channel.allocator.buffer(bytes: response.body.prefix(truncatedTo))
                    context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                }
                context.flush()
                context.close(promise: nil)
                return
            }
            if sendsBody {
                let buffer = context.channel.allocator.buffer(bytes: response.body)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            }
            let done = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
            if !keepAlive {
                done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
