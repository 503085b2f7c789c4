import MarqueeCore

import struct Foundation.Data
import struct Foundation.URL

extension SourceConfiguration {
    /// The environment variables ``fromEnvironment(_:)`` reads.
    public enum EnvironmentKey {
        /// TMDB's key; or `TMDB_API_KEY_FILE`, a path to a file holding it.
        public static let tmdbAPIKey = "TMDB_API_KEY"
        /// KOFIC's key; or `KOFIC_API_KEY_FILE`.
        public static let koficAPIKey = "KOFIC_API_KEY"
        /// Kakao's REST API key; or `KAKAO_REST_API_KEY_FILE`.
        public static let kakaoAPIKey = "KAKAO_REST_API_KEY"
        /// A signed-in TMDB user's session id, for the account ``tmdbAccount`` names; or `TMDB_SESSION_ID_FILE`.
        public static let tmdbSessionID = "TMDB_SESSION_ID"
        /// The label of the account `TMDB_SESSION_ID` signs in (default `default`).
        public static let tmdbAccount = "TMDB_ACCOUNT"
        /// Several accounts' sessions: `label=session` pairs separated by commas or lines; or `TMDB_SESSIONS_FILE`.
        public static let tmdbSessions = "TMDB_SESSIONS"
        /// Base URLs.
        public static let tmdbBaseURL = "TMDB_BASE_URL"
        /// TMDB's image base URL.
        public static let tmdbImageBaseURL = "TMDB_IMAGE_BASE_URL"
        /// KOFIC's base URL.
        public static let koficBaseURL = "KOFIC_BASE_URL"
        /// Kakao's base URL.
        public static let kakaoBaseURL = "KAKAO_BASE_URL"
        /// Open Library's base URL.
        public static let openLibraryBaseURL = "OPENLIBRARY_BASE_URL"
        /// Open Library Covers' base URL.
        public static let openLibraryCoversBaseURL = "OPENLIBRARY_COVERS_BASE_URL"
        /// The `User-Agent` of every request.
        public static let userAgent = "MARQUEE_USER_AGENT"
    }

    /// Reads the configuration from environment variables (docs/design.md, "Configuration").
    ///
    /// | variable | default |
    /// |---|---|
    /// | `TMDB_API_KEY` or `TMDB_API_KEY_FILE` | none |
    /// | `KOFIC_API_KEY` or `KOFIC_API_KEY_FILE` | none |
    /// | `KAKAO_REST_API_KEY` or `KAKAO_REST_API_KEY_FILE` | none |
    /// | `TMDB_SESSION_ID` or `TMDB_SESSION_ID_FILE` | none |
    /// | `TMDB_ACCOUNT` (the label of `TMDB_SESSION_ID`'s account) | `default` |
    /// | `TMDB_SESSIONS` or `TMDB_SESSIONS_FILE` (`label=session` pairs) | none |
    /// | `TMDB_BASE_URL` | `https://api.themoviedb.org/3` |
    /// | `TMDB_IMAGE_BASE_URL` | `https://image.tmdb.org/t/p` |
    /// | `KOFIC_BASE_URL` | `https://www.kobis.or.kr/kobisopenapi/webservice/rest` |
    /// | `KAKAO_BASE_URL` | `https://dapi.kakao.com` |
    /// | `OPENLIBRARY_BASE_URL` | `https://openlibrary.org` |
    /// | `OPENLIBRARY_COVERS_BASE_URL` | `https://covers.openlibrary.org` |
    /// | `MARQUEE_USER_AGENT` | `marquee/1.0 (catalogue ingestion pipeline)` |
    ///
    /// A `*_FILE` variable names a file whose content, trimmed of surrounding whitespace, is the key (for Docker
    /// and Kubernetes secrets). Empty variables count as unset. Base URLs may end in a slash and must be `http` or
    /// `https`.
    ///
    /// - Parameter environment: The variables, e.g. `ProcessInfo.processInfo.environment`.
    /// - Returns: The validated configuration.
    /// - Throws: A ``SourceError`` with code ``SourceError/Code-swift.struct/invalidConfiguration`` when a base URL
    ///   is wrong, a key file cannot be read or is empty, or both a key and its `*_FILE` are set. The error names
    ///   the variable, never the key.
    public static func fromEnvironment(_ environment: [String: String]) throws(SourceError) -> SourceConfiguration {
        var configuration = SourceConfiguration()
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.trimmingASCIIWhitespace().isEmpty else { return nil }
            return value
        }
        if let url = value(EnvironmentKey.tmdbBaseURL) { configuration.tmdbBaseURL = url }
        if let url = value(EnvironmentKey.tmdbImageBaseURL) { configuration.tmdbImageBaseURL = url }
        if let url = value(EnvironmentKey.koficBaseURL) { configuration.koficBaseURL = url }
        if let url = value(EnvironmentKey.kakaoBaseURL) { configuration.kakaoBaseURL = url }
        if let url = value(EnvironmentKey.openLibraryBaseURL) { configuration.openLibraryBaseURL = url }
        if let url = value(EnvironmentKey.openLibraryCoversBaseURL) { configuration.openLibraryCoversBaseURL = url }
        if let agent = value(EnvironmentKey.userAgent) { configuration.userAgent = agent.trimmingASCIIWhitespace() }
        configuration.tmdbAPIKey = try Self.key(EnvironmentKey.tmdbAPIKey, in: environment)
        configuration.koficAPIKey = try Self.key(EnvironmentKey.koficAPIKey, in: environment)
        configuration.kakaoAPIKey = try Self.key(EnvironmentKey.kakaoAPIKey, in: environment)
        if let pairs = try Self.key(EnvironmentKey.tmdbSessions, in: environment, multiline: true) {
            configuration.tmdbSessions = try Self.sessions(pairs.revealed)
        }
        if let session = try Self.key(EnvironmentKey.tmdbSessionID, in: environment) {
            let label = value(EnvironmentKey.tmdbAccount)?.trimmingASCIIWhitespace() ?? "default"
            guard FetchJob.isTMDBAccountLabel(label) else {
                throw SourceError(
                    .invalidConfiguration,
                    "\(EnvironmentKey.tmdbAccount) must be an account label (a-z, 0-9, '.', '_', '-'), got '\(label.prefix(80))'"
                )
            }
            guard configuration.tmdbSessions[label] == nil else {
                throw SourceError(
                    .invalidConfiguration,
                    "the account '\(label)' has a session in both \(EnvironmentKey.tmdbSessionID) and \(EnvironmentKey.tmdbSessions)"
                )
            }
            configuration.tmdbSessions[label] = session
        }
        try configuration.validate()
        return configuration
    }

    /// The sessions of `TMDB_SESSIONS`: `label=session` pairs separated by commas or line breaks. Errors name the
    /// pair by its position, never its session.
    static func sessions(_ text: String) throws(SourceError) -> [String: Secret] {
        var sessions: [String: Secret] = [:]
        let pairs = text.split(whereSeparator: { $0 == "," || $0 == "\n" || $0 == "\r" })
            .map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        for (index, pair) in pairs.enumerated() {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingASCIIWhitespace() }
            let name = EnvironmentKey.tmdbSessions
            guard parts.count == 2, !parts[1].isEmpty else {
                throw SourceError(.invalidConfiguration, "\(name): pair \(index + 1) is not label=session")
            }
            guard FetchJob.isTMDBAccountLabel(parts[0]) else {
                throw SourceError(
                    .invalidConfiguration,
                    "\(name): pair \(index + 1): '\(parts[0].prefix(80))' is not an account label (a-z, 0-9, '.', '_', '-')"
                )
            }
            guard !parts[1].unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
                throw SourceError(
                    .invalidConfiguration,
                    "\(name): the session of '\(parts[0])' contains spaces or control characters"
                )
            }
            guard sessions[parts[0]] == nil else {
                throw SourceError(.invalidConfiguration, "\(name): the account '\(parts[0])' is named twice")
            }
            sessions[parts[0]] = Secret(parts[1])
        }
        return sessions
    }

    /// The key from `name`, or from the file `name_FILE` names; `multiline` accepts a file of several lines.
    private static func key(
        _ name: String,
        in environment: [String: String],
        multiline: Bool = false
    ) throws(SourceError) -> Secret? {
        let fileName = name + "_FILE"
        let direct = environment[name].map { $0.trimmingASCIIWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
        let path = environment[fileName].map { $0.trimmingASCIIWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
        switch (direct, path) {
        case (nil, nil):
            return nil
        case (let direct?, nil):
            return Secret(direct)
        case (nil, let path?):
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw SourceError(.invalidConfiguration, "\(fileName): cannot read '\(path)'")
            }
            guard let text = String(validating: data, as: UTF8.self) else {
                throw SourceError(.invalidConfiguration, "\(fileName): '\(path)' is not UTF-8 text")
            }
            let key = text.trimmingASCIIWhitespace()
            guard !key.isEmpty else {
                throw SourceError(.invalidConfiguration, "\(fileName): '\(path)' is empty")
            }
            guard
                multiline
                    || !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw SourceError(.invalidConfiguration, "\(fileName): '\(path)' holds more than one line")
            }
            return Secret(key)
        case (.some, .some):
            throw SourceError(.invalidConfiguration, "set either \(name) or \(fileName), not both")
        }
    }
}
