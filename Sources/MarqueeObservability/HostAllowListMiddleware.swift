public import Hummingbird
public import Logging

/// Refuses a request whose `Host` header names a host its ``HostAllowList`` does not answer, with
/// `421 Misdirected Request` and a short text that says how to allow it.
///
/// A request with a second `Host` header is refused too: which of the two a proxy or a browser meant is unknown.
public struct HostAllowListMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The names answered.
    public let allowList: HostAllowList
    /// Paths answered whatever the `Host` (e.g. a health probe that shows nothing else).
    public let exemptPaths: Set<String>
    /// Appended to the refusal: how an operator allows a name (`add it with --allowed-host`).
    public let hint: String
    private let logger: Logger

    /// - Parameters:
    ///   - allowList: The names answered.
    ///   - exemptPaths: Paths answered whatever the `Host`, such as `/healthz`. Default: none.
    ///   - hint: How an operator allows another name, for the refusal's text.
    ///   - logger: Where refusals are logged (at debug level: a page on another site can cause any number).
    public init(allowList: HostAllowList, exemptPaths: Set<String> = [], hint: String, logger: Logger) {
        self.allowList = allowList
        self.exemptPaths = exemptPaths
        self.hint = hint
        self.logger = logger
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // HTTP/1 requests carry their first Host header as the authority; any further one stays a header field.
        let host = request.head.authority
        let hasSecondHost = request.headers.contains { $0.name.canonicalName == "host" }
        if self.exemptPaths.contains(request.uri.path) || (!hasSecondHost && self.allowList.allows(host: host)) {
            return try await next(request, context)
        }
        let shown = Self.printable(host ?? "")
        self.logger.debug("refused a request for another host", metadata: ["marquee.http.host": "\(shown)"])
        let text =
            "misdirected request: this server does not answer for Host '\(shown)'\(hasSecondHost ? " (sent twice)" : ""); \(self.hint)\n"
        var response = text.response(from: request, context: context)
        response.status = .misdirectedRequest
        response.headers[.cacheControl] = "no-store"
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }

    /// At most 100 printable ASCII characters of `text` (it comes from the request).
    private static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.lazy.filter { (0x20..<0x7F).contains($0.value) }.prefix(100))
        )
    }
}
