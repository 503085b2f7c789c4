public import MarqueeCore

/// Why the store failed, or refused a record or a query.
///
/// ``isRetriable`` says whether the same work may succeed later: a store down or a write conflict, yes; data or
/// a query the store refuses, no.
public struct StoreError: RetriableError, Sendable {
    public enum Code: String, Sendable {
        /// The store cannot be reached or is not accepting work now (connection refused, shutting down): every
        /// write would fail the same way; try again later.
        case unavailable
        /// The server refused the data of a statement (a constraint or type error): the same batch will fail
        /// again; the records at fault must be found and set aside.
        case rejected
        /// A conflict that a retry resolves (serialization failure, deadlock).
        case conflict
        case invalidLocation
        /// The schema could not be brought up to date (or is newer than this program).
        case migration
        /// A read query's arguments cannot be answered (a title with no letter or digit, a day that is not a
        /// calendar day, a limit out of range): the same query will fail again.
        case invalidQuery
        /// A record the store refuses: a field of the wrong type, a key that does not match its data, a missing
        /// required field. It can never be stored as it is (the indexer sends it to the DLQ with this error's
        /// description).
        case invalidRecord
    }

    public var code: Code
    /// What happened (no password: locations are shown redacted).
    public var message: String
    /// For ``Code-swift.enum/invalidRecord``: the field at fault (`nil` when the record as a whole is wrong).
    public var field: String?
    /// For ``Code-swift.enum/unavailable``: the server is up but refused the login (a role, a password, a
    /// database, `pg_hba.conf`): the location's credentials need fixing, not the server.
    public var refusedLogin: Bool

    public init(_ code: Code, _ message: String, field: String? = nil, refusedLogin: Bool = false) {
        self.code = code
        self.message = message
        self.field = field
        self.refusedLogin = refusedLogin
    }

    /// A record of `kind` and `key` the store refuses (``Code-swift.enum/invalidRecord``).
    static func invalidRecord(kind: String, key: String, field: String?, _ reason: String) -> StoreError {
        let at = field.map { " field '\($0)':" } ?? ":"
        return StoreError(.invalidRecord, "invalid \(kind) record '\(key.prefix(200))':\(at) \(reason)", field: field)
    }

    /// Whether the same work may succeed later: the store was down, or the write met a conflict.
    public var isRetriable: Bool { self.code == .unavailable || self.code == .conflict }

    public var description: String { self.message }
}
