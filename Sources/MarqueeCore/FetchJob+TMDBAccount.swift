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

    /// How a list job names its account upstream: TMDB's v3 paths take the numeric id `/account` answered, its v4
    /// paths the account object id its access token names. Either is public (neither signs in): the session or
    /// the token stays with the fetch worker.
    public enum TMDBAccountID: Hashable, Sendable, ExpressibleByIntegerLiteral {
        /// v3: the numeric account id (`account_id`), read with the account's session.
        case number(Int64)
        /// v4: the account object id (`account_object_id`), read with the account's access token.
        case object(String)

        public init(integerLiteral value: Int64) { self = .number(value) }
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

    /// Decodes the fields of a `tmdb.account.list` payload after its `v` and `kind`: `account` (a label), either
    /// `account_id` (TMDB's numeric id of the account, which v3's `/account` answered) or `account_object_id` (the
    /// v4 account object id of the account's access token), `list` (rated, favorite or watchlist), `page` (1…500,
    /// default 1) and `as_of` (the refresh, epoch ms; default 0, none).
    static func tmdbAccountList(reading reader: inout PayloadReader) throws(PayloadError) -> FetchJob {
        let account = try reader.tmdbAccountLabel()
        let number = try reader.optionalInt("account_id", in: FieldRules.tmdbAccountIDs)
        let objectID = try reader.optionalTMDBAccountObjectID()
        let accountID: TMDBAccountID
        switch (number, objectID) {
        case (let number?, nil): accountID = .number(number)
        case (nil, let objectID?): accountID = .object(objectID)
        case (nil, nil):
            throw PayloadError(.missingField, field: "account_id", TMDBAccountID.eitherExpected)
        case (_?, _?):
            throw PayloadError(.invalidField, field: "account_object_id", TMDBAccountID.eitherExpected)
        }
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
            switch accountID {
            case .number(let number):
                try PayloadReader.check(number, field: "account_id", in: FieldRules.tmdbAccountIDs)
            case .object(let objectID):
                try PayloadReader.checkTMDBAccountObjectID(objectID)
            }
            try PayloadReader.check(page, field: "page", in: FieldRules.pages)
            try PayloadReader.check(asOf, field: "as_of", in: FieldRules.epochMilliseconds)
        default:
            return
        }
    }
}

extension FetchJob.TMDBAccountID {
    static let objectExpected = "an account object id (1 to 64 letters and digits)"
    static let eitherExpected = "either account_id (v3, a number) or account_object_id (v4), not both"
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

    /// The optional `account_object_id` field: a v4 account object id (``TMDBAccessToken/isAccountObjectID(_:)``).
    mutating func optionalTMDBAccountObjectID() throws(PayloadError) -> String? {
        try self.optionalString(
            "account_object_id",
            maxLength: TMDBAccessToken.objectIDLength,
            check: TMDBAccessToken.isAccountObjectID,
            expected: FetchJob.TMDBAccountID.objectExpected
        )
    }

    static func checkTMDBAccountObjectID(_ objectID: String) throws(PayloadError) {
        try Self.check(
            objectID,
            field: "account_object_id",
            maxLength: TMDBAccessToken.objectIDLength,
            check: TMDBAccessToken.isAccountObjectID,
            expected: FetchJob.TMDBAccountID.objectExpected
        )
    }
}
