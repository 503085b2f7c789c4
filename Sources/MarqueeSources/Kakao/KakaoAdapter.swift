public import MarqueeCore
import MarqueeJSON

/// The adapter for Kakao (Daum) image search, which finds posters for KOFIC movies (KOFIC has none).
///
/// Requests authenticate with `Authorization: KakaoAK <key>`. A `kakao.poster` job yields no records, only at
/// most one poster image job for `kofic:movie:<movieCd>`.
public struct KakaoAdapter: SourceAdapter {
    /// The base URLs, key and user agent.
    public let configuration: SourceConfiguration
    /// Whether the image worker may download from a host (the lowercased host of a document's URL).
    public let imageHostAllowed: @Sendable (String) -> Bool
    /// How many documents one search asks for.
    public static let pageSize = 10

    /// Creates the adapter.
    ///
    /// - Parameters:
    ///   - configuration: The source configuration; only the Kakao values are used.
    ///   - imageHostAllowed: The image host allowlist; a document whose URL's host it refuses is passed over.
    public init(
        configuration: SourceConfiguration,
        imageHostAllowed: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
        self.configuration = configuration
        self.check = ResponseCheck(source: .kakao, secrets: configuration.secrets)
        self.imageHostAllowed = imageHostAllowed
    }

    /// How answers are checked (made once: it lists the configured keys, to keep them out of error texts).
    let check: ResponseCheck

    /// The request for a `kakao.poster` job: `GET /v2/search/image?query=…&sort=accuracy&page=1&size=10`.
    ///
    /// - Throws: A ``SourceError`` when no Kakao key is configured or the job is not a Kakao job.
    public func request(for job: FetchJob) throws(SourceError) -> SourceRequest {
        guard case .kakaoPoster(let query, _) = job else {
            throw SourceError(.invalidConfiguration, source: .kakao, "a \(job.kind) job is not a Kakao job")
        }
        guard let key = self.configuration.kakaoAPIKey else { throw SourceError.keyNotConfigured(.kakao) }
        return .json(
            .kakao,
            base: self.configuration.kakaoBaseURL,
            path: ["v2", "search", "image"],
            query: [
                QueryItem("query", query), QueryItem("sort", "accuracy"), QueryItem("page", "1"),
                QueryItem("size", String(Self.pageSize)),
            ],
            userAgent: self.configuration.userAgent,
            headers: [(name: "Authorization", value: "KakaoAK \(key.revealed)")]
        )
    }

    /// The poster image job of an image search.
    ///
    /// The poster is the first document whose `image_url` host passes ``imageHostAllowed``, else the first whose
    /// `thumbnail_url` host does; with none, or without a movie code to own it, the result is empty (not an error).
    ///
    /// - Throws: A ``SourceError``: 429 rate limited, 5xx unavailable, 401/403 unauthorized, an `errorType` body
    ///   bad request, a success body without `documents` malformed.
    public func parse(
        _ response: SourceResponse,
        for job: FetchJob,
        fetchedAt: Int64
    ) throws(SourceError) -> SourceResult {
        guard case .kakaoPoster(_, let movieCode) = job else {
            throw SourceError(.invalidConfiguration, source: .kakao, "a \(job.kind) job is not a Kakao job")
        }
        try self.check.transient(response, fetchedAt: fetchedAt)
        let json = self.check.json(response)
        if let json, let errorType = json["errorType"]?.trimmedText ?? json["code"]?.int.map({ "code \($0)" }) {
            let message = json["message"]?.trimmedText ?? json["msg"]?.trimmedText
            let reason = "\(errorType)\(message.map { ": \($0)" } ?? "")"
            try self.check.status(response, message: reason)
            if json["code"]?.int == -401 {
                throw SourceError(.unauthorized(.kakao), self.check.scrubbed(reason), status: response.status)
            }
            throw SourceError(.badRequest, source: .kakao, self.check.scrubbed(reason), status: response.status)
        }
        try self.check.status(response, message: nil)
        guard let documents = json?["documents"]?.arrayValue else {
            throw self.check.malformed(response, "an image search result with documents")
        }
        var result = SourceResult()
        guard let movieCode else {
            result.skipped.append("kakao.poster without movie_cd: no owner for a poster")
            return result
        }
        if let url = self.posterURL(in: documents) {
            result.add(ImageJob(url: url, owner: "kofic:movie:\(movieCode)", role: .poster))
        }
        return result
    }

    /// The chosen poster URL among search documents.
    func posterURL(in documents: [JSONValue]) -> String? {
        for field in ["image_url", "thumbnail_url"] {
            for document in documents {
                guard let url = document[field]?.trimmedText, let host = URLBuilder.host(of: url) else { continue }
                if self.imageHostAllowed(host) { return url }
            }
        }
        return nil
    }
}
