import MarqueeJSON

// MARK: - FetchJob + TMDBAccount

extension FetchJob {
    /// The movie lists of a signed-in TMDB account (`/account/{account_id}/<list>/movies`).
    public enum TMDBAccountList: String, Hashable, Sendable, CaseIterable {
        /// The movies the user rated, each with the user's rating and when it was given.
        case rated
        /// The user's favourite movies.
        case favorite
        /// The movies on the user's watchlist.
        case watchlist
    }

    /// The longest account label.
    public static let tmdbAccountLabelLength = 64
    /// What an account label looks like, for refusals.
    static let tmdbAccountLabelExpected = "an account label such as default or family-tv (a-z, 0-9, '.', '_', '-')"

    /// Whether `label` names an account as the fetch worker's settings do: 1…64 of `a-z`, `0-9`, `.`, `_`, `-`,
    /// starting with a letter or a digit.
    ///
    /// A job names its account by this label, never by its session id: payloads are kept in Kafka, dead letters
    /// and logs, the session is a secret the fetch worker alone holds.
    public static func isTMDBAccountLabel(_ label: String) -> Bool {
        guard let first = label.utf8.first, label.utf8.count <= Self.tmdbAccountLabelLength else { return false }
        func allowed(_ byte: UInt8) -> Bool {
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x5F
                || byte == 0x2D
        }
        let isAlphanumeric = (0x61...0x7A).contains(first) || (0x30...0x39).contains(first)
        return isAlphanumeric && label.utf8.allSatisfy(allowed)
    }

    /// Decodes the fields of a `tmdb.account` payload after its `v` and `kind`: `account` (a label).
    static func tmdbAccount(reading reader: inout PayloadReader) throws(PayloadError) -> FetchJob {
        .tmdbAccount(account: try reader.tmdbAccountLabel())
    }

    /// Decodes the fields of a `tmdb.account.list` payload after its `v` and `kind`: `account` (a label),
    /// `account_id` (TMDB's numeric id of the account, which `/account` answered), `list` (rated, favorite or
    /// watchlist), `page` (1…500, default 1) and `as_of` (the refresh, epoch ms; default 0, none).
    static func tmdbAccountList(reading reader: inout PayloadReader) throws(PayloadError) -> FetchJob {
        let account = try reader.tmdbAccountLabel()
        let accountID = try reader.int("account_id", in: FieldRules.tmdbAccountIDs)
        let name = try reader.string(
            "list",
            check: { TMDBAccountList(rawValue: $0) != nil },
            expected: "one of rated, favorite, watchlist"
        )
        return .tmdbAccountList(
            account: account,
            accountID: accountID,
            list: TMDBAccountList(rawValue: name)!,
            page: try reader.optionalInt("page", in: FieldRules.pages) ?? 1,
            asOf: try reader.optionalInt("as_of", in: FieldRules.epochMilliseconds) ?? 0
        )
    }

    /// The checks of a built account job, the same as ``decode(json:)`` applies to its payload.
    func checkTMDBAccount() throws(PayloadError) {
        switch self {
        case .tmdbAccount(let account):
            try PayloadReader.checkTMDBAccountLabel(account)
        case .tmdbAccountList(let account, let accountID, _, let page, let asOf):
            try PayloadReader.checkTMDBAccountLabel(account)
            try PayloadReader.check(accountID, field: "account_id", in: FieldRules.tmdbAccountIDs)
            try PayloadReader.check(page, field: "page", in: FieldRules.pages)
            try PayloadReader.check(asOf, field: "as_of", in: FieldRules.epochMilliseconds)
        default:
            return
        }
    }
}

extension PayloadReader {
    /// The `account` field: an account label (``FetchJob/isTMDBAccountLabel(_:)``).
    mutating func tmdbAccountLabel() throws(PayloadError) -> String {
        try self.string(
            "account",
            maxLength: FetchJob.tmdbAccountLabelLength,
            check: FetchJob.isTMDBAccountLabel,
            expected: FetchJob.tmdbAccountLabelExpected
        )
    }

    static func checkTMDBAccountLabel(_ label: String) throws(PayloadError) {
        try Self.check(
            label,
            field: "account",
            maxLength: FetchJob.tmdbAccountLabelLength,
            check: FetchJob.isTMDBAccountLabel,
            expected: FetchJob.tmdbAccountLabelExpected
        )
    }
}
