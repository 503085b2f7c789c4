import MarqueeCore
import MarqueeJSON

/// The image settings of TMDB's `GET /configuration`: where images live and the renditions TMDB serves.
public struct TMDBImageConfiguration: Sendable, Hashable {
    /// The HTTPS image base URL without a trailing slash, e.g. `https://image.tmdb.org/t/p`.
    public var secureBaseURL: String
    /// Poster widths TMDB serves (`w92` … `original`).
    public var posterSizes: [String]
    /// Backdrop widths TMDB serves (`w300` … `original`).
    public var backdropSizes: [String]

    /// Creates an image configuration.
    public init(secureBaseURL: String, posterSizes: [String], backdropSizes: [String]) {
        self.secureBaseURL = secureBaseURL
        self.posterSizes = posterSizes
        self.backdropSizes = backdropSizes
    }
}

/// Reading TMDB's `GET /configuration`, which the fetch worker calls once at start-up.
public enum TMDBConfiguration {
    /// The image configuration in a `/configuration` body.
    ///
    /// - Parameter body: The response body.
    /// - Returns: The secure base URL (trailing slash removed) and the poster and backdrop sizes.
    /// - Throws: A ``SourceError`` with code ``SourceError/Code-swift.struct/malformed`` when the body is not JSON
    ///   or has no `images.secure_base_url` that is an http(s) URL.
    public static func parse(_ body: some Collection<UInt8>) throws(SourceError) -> TMDBImageConfiguration {
        guard let json = JSONDocument.parse(body) else {
            throw SourceError(.malformed, source: .tmdb, "the configuration body is not JSON")
        }
        guard let images = json["images"], let base = images["secure_base_url"]?.trimmedText,
            let checked = try? SourceConfiguration.checkedBaseURL(base, name: "images.secure_base_url")
        else {
            throw SourceError(.malformed, source: .tmdb, "the configuration has no images.secure_base_url")
        }
        return TMDBImageConfiguration(
            secureBaseURL: checked,
            posterSizes: (images["poster_sizes"]?.arrayValue ?? []).compactMap(\.trimmedText),
            backdropSizes: (images["backdrop_sizes"]?.arrayValue ?? []).compactMap(\.trimmedText)
        )
    }

    /// The image configuration in a `/configuration` response, after classifying error answers as
    /// ``SourceAdapter/parse(_:for:fetchedAt:)`` does.
    ///
    /// - Parameters:
    ///   - response: The upstream's answer.
    ///   - configuration: The source configuration (its keys are scrubbed from error reasons).
    ///   - fetchedAt: When the response arrived, in epoch milliseconds (for an HTTP-date `Retry-After`).
    /// - Throws: A ``SourceError`` for error answers and malformed bodies.
    public static func parse(
        _ response: SourceResponse,
        configuration: SourceConfiguration,
        fetchedAt: Int64
    ) throws(SourceError) -> TMDBImageConfiguration {
        _ = try TMDBAdapter(configuration: configuration).checked(response, fetchedAt: fetchedAt)
        return try self.parse(response.body)
    }
}
