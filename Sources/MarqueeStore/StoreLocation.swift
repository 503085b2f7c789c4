import Foundation

/// Where the store is: `MARQUEE_STORE`, `--store`.
///
/// - `sqlite:path` — an SQLite file (created with its folder when missing); the embedded default is
///   `sqlite:./var/marquee.db`.
/// - `postgres://user:password@host:port/database?sslmode=disable|prefer|require` (also `postgresql://`); port
///   5432, user `postgres` and database = user by default, `sslmode` `prefer` by default.
///
/// ``description`` never shows the password.
public struct StoreLocation: Hashable, Sendable, CustomStringConvertible {
    public enum TLSMode: String, Hashable, Sendable { case disable, prefer, require }

    public enum Engine: Hashable, Sendable {
        case sqlite(path: String)
        case postgres(host: String, port: Int, user: String, password: String?, database: String, tls: TLSMode)
    }

    public var engine: Engine

    /// The embedded default.
    public static let defaultValue = "sqlite:./var/marquee.db"

    public init(engine: Engine) { self.engine = engine }

    /// - Throws: ``StoreError`` (``StoreError/Code-swift.enum/invalidLocation``) saying what is wrong.
    public init(parsing text: String) throws(StoreError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }  // sqlite://./x.db
            guard !path.isEmpty else { throw Self.invalid("sqlite: needs a file path, e.g. sqlite:./var/marquee.db") }
            self.engine = .sqlite(path: path)
            return
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") else {
            throw Self.invalid(
                "'\(Self.redacted(text).prefix(80))' is not a store location: use sqlite:PATH or postgres://user:password@host:port/database"
            )
        }
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw Self.invalid("'\(Self.redacted(text).prefix(80))' is not a valid postgres:// URL")
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        var database = String(components.path.drop(while: { $0 == "/" }))
        database = database.removingPercentEncoding ?? database
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: item.value ?? "") else {
                    throw Self.invalid(
                        "sslmode must be disable, prefer or require, not '\(item.value?.prefix(20) ?? "")'"
                    )
                }
                tls = mode
            default:
                throw Self.invalid("unknown postgres:// option '\(item.name.prefix(40))' (known: sslmode)")
            }
        }
        self.engine = .postgres(
            host: host,
            port: components.port ?? 5432,
            user: user,
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database.isEmpty ? user : database,
            tls: tls
        )
    }

    public var description: String {
        switch self.engine {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let host, let port, let user, let password, let database, let tls):
            "postgres://\(user)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
        }
    }

    /// The location as `MARQUEE_STORE` takes it, password included: for handing to a child process only —
    /// never log it (``description`` is the redacted form).
    public var connectionString: String {
        switch self.engine {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let host, let port, let user, let password, let database, let tls):
            let allowed = CharacterSet.urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/"))
            let secret = password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0) } ?? ""
            let name = user.addingPercentEncoding(withAllowedCharacters: allowed) ?? user
            return "postgres://\(name)\(secret)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
        }
    }

    /// The engine's name for logs and metrics: `sqlite` or `postgres`.
    public var engineName: String {
        switch self.engine {
        case .sqlite: "sqlite"
        case .postgres: "postgres"
        }
    }

    private static func invalid(_ message: String) -> StoreError { StoreError(.invalidLocation, message) }

    /// A location string with any password masked (for error messages about strings that did not parse).
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"),
            let at = text.range(of: "@", range: scheme.upperBound..<text.endIndex),
            let colon = text.range(of: ":", range: scheme.upperBound..<at.lowerBound)
        else { return text }
        return text.replacingCharacters(in: colon.upperBound..<at.lowerBound, with: "***")
    }
}
