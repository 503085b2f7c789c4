import MarqueeCore
import MarqueeJSON

/// The status handling every adapter shares.
struct ResponseCheck {
    let source: Source
    let secrets: [Secret]

    /// Throws for 429 (rate limited) and 5xx (unavailable), the answers whose body does not matter.
    func transient(_ response: SourceResponse, fetchedAt: Int64) throws(SourceError) {
        let retryAfter = response.header("retry-after").flatMap { RetryAfter.parse($0, now: fetchedAt) }
        if response.status == 429 {
            throw SourceError(
                .rateLimited,
                source: self.source,
                "rate limited\(self.upstreamMessage(response).map { ": \($0)" } ?? "")",
                status: response.status,
                retryAfter: retryAfter
            )
        }
        if (500...599).contains(response.status) {
            throw SourceError(
                .unavailable,
                source: self.source,
                "server error\(self.upstreamMessage(response).map { ": \($0)" } ?? "")",
                status: response.status,
                retryAfter: retryAfter
            )
        }
    }

    /// Throws for every status that is not 2xx: 401/403 unauthorized, 404 not found, other 4xx bad request,
    /// anything else unavailable. `message` is the upstream's own error text, if the adapter found one.
    func status(_ response: SourceResponse, message: String?) throws(SourceError) {
        let status = response.status
        guard !(200...299).contains(status) else { return }
        let detail = message.map { ": \(self.scrubbed($0))" } ?? ""
        switch status {
        case 401, 403:
            throw SourceError(.unauthorized(self.source), "the key was refused\(detail)", status: status)
        case 404:
            throw SourceError(.notFound, source: self.source, "not found\(detail)", status: status)
        case 400...499:
            throw SourceError(.badRequest, source: self.source, "request refused\(detail)", status: status)
        default:
            throw SourceError(.unavailable, source: self.source, "unexpected HTTP status\(detail)", status: status)
        }
    }

    /// The body as JSON, or `nil` when it is not JSON.
    func json(_ response: SourceResponse) -> JSONValue? {
        JSONDocument.parse(response.body)
    }

    /// A ``SourceError/Code-swift.struct/malformed`` error for a success answer of the wrong shape.
    func malformed(_ response: SourceResponse, _ what: String) -> SourceError {
        let reason: String
        if response.body.isEmpty {
            reason = "empty body; expected \(what)"
        } else if self.json(response) == nil {
            reason = "the body (\(response.body.count) bytes) is not JSON; expected \(what)"
        } else {
            reason = "unexpected JSON; expected \(what)"
        }
        return SourceError(.malformed, source: self.source, reason, status: response.status)
    }

    /// Upstream text made safe for an error: shortened, keys removed, one line.
    func scrubbed(_ text: String) -> String {
        let oneLine = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
        return oneLine.redacting(self.secrets).shortened(to: 200)
    }

    /// A short message from a JSON error body of any source, for 429/5xx reasons.
    private func upstreamMessage(_ response: SourceResponse) -> String? {
        guard let json = self.json(response) else { return nil }
        let text = json["status_message"]?.text ?? json["message"]?.text ?? json["faultInfo"]?["message"]?.text
        return text.map(self.scrubbed)
    }
}
