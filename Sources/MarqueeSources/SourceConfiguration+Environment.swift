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
        /// A signed-in TMDB user's v4 access token, for the account ``tmdbAccount`` names; or
        /// `TMDB_ACCESS_TOKEN_FILE`.
        public static let tmdbAccessToken = "TMDB_ACCESS_TOKEN"
        /// Several accounts' v4 access tokens: `label=token` pairs separated by commas or lines; or
        /// `TMDB_ACCESS_TOKENS_FILE`.
        public static let tmdbAccessTokens = "TMDB_ACCESS_TOKENS"
        /// Base URLs.
        public static let tmdbBaseURL = "TMDB_BASE_URL"
        /// TMDB's API v4 (the account lists read with an access token).
        public static let tmdbV4BaseURL = "TMDB_V4_BASE_URL"
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
    /// | `TMDB_ACCOUNT` (the label of `TMDB_SESSION_ID`'s or `TMDB_ACCESS_TOKEN`'s account) | `default` |
    /// | `TMDB_SESSIONS` or `TMDB_SESSIONS_FILE` (`label=session` pairs) | none |
    /// | `TMDB_ACCESS_TOKEN` or `TMDB_ACCESS_TOKEN_FILE` (labelled by `TMDB_ACCOUNT`) | none |
    /// | `TMDB_ACCESS_TOKENS` or `TMDB_ACCESS_TOKENS_FILE` (`label=token` pairs) | none |
    /// | `TMDB_BASE_URL` | `https://api.themoviedb.org/3` |
    /// | `TMDB_V4_BASE_URL` | `TMDB_BASE_URL` with its final `/3` as `/4` |
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
        if let url = value(EnvironmentKey.tmdbV4BaseURL) { configuration.tmdbV4BaseURL = url }
        if let url = value(EnvironmentKey.tmdbImageBaseURL) { configuration.tmdbImageBaseURL = url }
        if let url = value(EnvironmentKey.koficBaseURL) { configuration.koficBaseURL = url }
        if let url = value(EnvironmentKey.kakaoBaseURL) { configuration.kakaoBaseURL = url }
        if let url = value(EnvironmentKey.openLibraryBaseURL) { configuration.openLibraryBaseURL = url }
        if let url = value(EnvironmentKey.openLibraryCoversBaseURL) { configuration.openLibraryCoversBaseURL = url }
        if let agent = value(EnvironmentKey.userAgent) { configuration.userAgent = agent.trimmingASCIIWhitespace() }
        configuration.tmdbAPIKey = try Self.key(EnvironmentKey.tmdbAPIKey, in: environment)
        configuration.koficAPIKey = try Self.key(EnvironmentKey.koficAPIKey, in: environment)
        configuration.kakaoAPIKey = try Self.key(EnvironmentKey.kakaoAPIKey, in: environment)
        try configuration.readAccounts(environment, label: value(EnvironmentKey.tmdbAccount))
        try configuration.validate()
        return configuration
    }

    /// The signed-in TMDB accounts: sessions (`TMDB_SESSIONS`, `TMDB_SESSION_ID`) and v4 access tokens
    /// (`TMDB_ACCESS_TOKENS`, `TMDB_ACCESS_TOKEN`), the single ones labelled by `TMDB_ACCOUNT`. A label names one
    /// account, signed in one way.
    private mutating func readAccounts(_ environment: [String: String], label: String?) throws(SourceError) {
        if let pairs = try Self.key(EnvironmentKey.tmdbSessions, in: environment, multiline: true) {
            self.tmdbSessions = try Self.pairs(pairs.revealed, variable: EnvironmentKey.tmdbSessions, of: "session")
        }
        if let pairs = try Self.key(EnvironmentKey.tmdbAccessTokens, in: environment, multiline: true) {
            let tokens = try Self.pairs(pairs.revealed, variable: EnvironmentKey.tmdbAccessTokens, of: "token")
            for (label, token) in tokens.sorted(by: { $0.key < $1.key }) {
                try Self.checkAccessToken(token, label: label, variable: EnvironmentKey.tmdbAccessTokens)
                try self.checkUnused(label, by: EnvironmentKey.tmdbAccessTokens)
            }
            self.tmdbAccessTokens = tokens
        }
        let single = [
            (EnvironmentKey.tmdbSessionID, try Self.key(EnvironmentKey.tmdbSessionID, in: environment)),
            (EnvironmentKey.tmdbAccessToken, try Self.key(EnvironmentKey.tmdbAccessToken, in: environment)),
        ]
        guard single.contains(where: { $0.1 != nil }) else { return }
        if single.allSatisfy({ $0.1 != nil }) {
            throw SourceError(
                .invalidConfiguration,
                "\(EnvironmentKey.tmdbSessionID) and \(EnvironmentKey.tmdbAccessToken) would both sign in the account \(EnvironmentKey.tmdbAccount) names; give each account its label with \(EnvironmentKey.tmdbSessions) or \(EnvironmentKey.tmdbAccessTokens)"
            )
        }
        let label = label?.trimmingASCIIWhitespace() ?? "default"
        guard FetchJob.isTMDBAccountLabel(label) else {
            throw SourceError(
                .invalidConfiguration,
                "\(EnvironmentKey.tmdbAccount) must be an account label (a-z, 0-9, '.', '_', '-'), got '\(label.prefix(80))'"
            )
        }
        for case (let variable, let secret?) in single {
            try self.checkUnused(label, by: variable)
            if variable == EnvironmentKey.tmdbAccessToken {
                try Self.checkAccessToken(secret, label: label, variable: variable)
                self.tmdbAccessTokens[label] = secret
            } else {
                self.tmdbSessions[label] = secret
            }
        }
    }

    /// Refuses a second way of signing in the account `label`.
    private func checkUnused(_ label: String, by variable: String) throws(SourceError) {
        let other =
            self.tmdbSessions[label] != nil
            ? EnvironmentKey.tmdbSessions : self.tmdbAccessTokens[label] != nil ? EnvironmentKey.tmdbAccessTokens : nil
        guard let other else { return }
        throw SourceError(
            .invalidConfiguration,
            "the account '\(label)' is signed in by both \(variable) and \(other); an account has one session or one access token"
        )
    }

    /// Refuses a token that is not a TMDB v4 user access token (a JWT naming its account in `sub`), naming the
    /// account, never the token.
    private static func checkAccessToken(_ token: Secret, label: String, variable: String) throws(SourceError) {
        guard TMDBAccessToken.accountObjectID(in: token.revealed) == nil else { return }
        throw SourceError(
            .invalidConfiguration,
            "\(variable): the token of '\(label)' is not a TMDB v4 user access token (a JWT whose 'sub' names the account)"
        )
    }

    /// The `label=secret` pairs of `TMDB_SESSIONS` or `TMDB_ACCESS_TOKENS`, separated by commas or line breaks.
    /// Errors name the pair by its position, never its secret.
    static func pairs(_ text: String, variable name: String, of what: String) throws(SourceError) -> [String: Secret] {
        var secrets: [String: Secret] = [:]
        let pairs = text.split(whereSeparator: { $0 == "," || $0 == "\n" || $0 == "\r" })
            .map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        for (index, pair) in pairs.enumerated() {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingASCIIWhitespace() }
            guard parts.count == 2, !parts[1].isEmpty else {
                throw SourceError(.invalidConfiguration, "\(name): pair \(index + 1) is not label=\(what)")
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
                    "\(name): the \(what) of '\(parts[0])' contains spaces or control characters"
                )
            }
            guard secrets[parts[0]] == nil else {
                throw SourceError(.invalidConfiguration, "\(name): the account '\(parts[0])' is named twice")
            }
            secrets[parts[0]] = Secret(parts[1])
        }
        return secrets
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
