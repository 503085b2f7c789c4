import MarqueeCore
import MarqueeJSON
import Testing

/// The `tmdb.account` and `tmdb.account.list` payloads: an account is named by its label (never a session), and
/// each refusal names its field.
@Suite struct TMDBAccountJobTests {
    static func decode(_ json: String) -> Result<FetchJob, PayloadError> {
        Result { () throws(PayloadError) in try FetchJob.decode(Array(json.utf8)) }
    }

    @Test func bothKindsRoundTripThroughTheirPayloads() throws {
        let jobs: [FetchJob] = [
            .tmdbAccount(account: "default"),
            .tmdbAccountList(account: "family-tv", accountID: 548, list: .rated, page: 3),
            .tmdbAccountList(account: "a.b_c", accountID: 9_000_000_000, list: .favorite, page: 1),
            .tmdbAccountList(account: "x", accountID: 1, list: .watchlist, page: 500, asOf: 1_709_294_400_000),
            .tmdbAccountList(
                account: "family",
                accountID: .object("5b8f7e2c0e0a2656f0008e3a"),
                list: .favorite,
                page: 2
            ),
        ]
        for job in jobs {
            #expect(try FetchJob.decode(job.encoded()) == job)
            #expect(try job.checked() == job)
        }
        #expect(
            String(decoding: jobs[1].encoded(), as: UTF8.self)
                == #"{"account":"family-tv","account_id":548,"kind":"tmdb.account.list","list":"rated","page":3,"v":1}"#
        )
        #expect(
            String(decoding: jobs[4].encoded(), as: UTF8.self)
                == #"{"account":"family","account_object_id":"5b8f7e2c0e0a2656f0008e3a","kind":"tmdb.account.list","list":"favorite","page":2,"v":1}"#
        )
        #expect(FetchJob.kinds.contains("tmdb.account"))
        #expect(FetchJob.kinds.contains("tmdb.account.list"))
    }

    @Test func theDedupeKeyNamesTheAccountTheListAndThePage() {
        #expect(FetchJob.tmdbAccount(account: "default").dedupeKey == "tmdb:account:default")
        #expect(
            FetchJob.tmdbAccountList(account: "default", accountID: 548, list: .watchlist, page: 2).dedupeKey
                == "tmdb:account:default:watchlist:2"
        )
    }

    @Test func theListPageDefaultsToOne() throws {
        let job = try Self.decode(
            #"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":548,"list":"rated"}"#
        )
        .get()
        #expect(job == .tmdbAccountList(account: "default", accountID: 548, list: .rated, page: 1))
    }

    @Test(arguments: [
        (#"{"v":1,"kind":"tmdb.account"}"#, "account"),
        (#"{"v":1,"kind":"tmdb.account","account":"Default"}"#, "account"),
        (#"{"v":1,"kind":"tmdb.account","account":"-x"}"#, "account"),
        (#"{"v":1,"kind":"tmdb.account","account":"a b"}"#, "account"),
        (#"{"v":1,"kind":"tmdb.account","account":"default","session_id":"abc"}"#, "session_id"),
        (#"{"v":1,"kind":"tmdb.account.list","account":"default","list":"rated"}"#, "account_id"),
        (#"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":0,"list":"rated"}"#, "account_id"),
        (#"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":5,"list":"lists"}"#, "list"),
        (
            #"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":5,"account_object_id":"ab12","list":"rated"}"#,
            "account_object_id"
        ),
        (
            #"{"v":1,"kind":"tmdb.account.list","account":"default","account_object_id":"a/b","list":"rated"}"#,
            "account_object_id"
        ),
        (
            #"{"v":1,"kind":"tmdb.account.list","account":"default","account_object_id":"","list":"rated"}"#,
            "account_object_id"
        ),
        (
            #"{"v":1,"kind":"tmdb.account.list","account":"default","account_object_id":7,"list":"rated"}"#,
            "account_object_id"
        ),
        (#"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":5,"list":"rated","page":501}"#, "page"),
        (#"{"v":1,"kind":"tmdb.account.list","account":"default","account_id":5,"list":"rated","as_of":-1}"#, "as_of"),
    ])
    func aWrongFieldIsRefusedByName(json: String, field: String) {
        guard case .failure(let error) = Self.decode(json) else {
            Issue.record("accepted \(json)")
            return
        }
        #expect(error.field == field)
    }

    @Test func anAccountLabelIsShortLowercaseASCII() {
        #expect(FetchJob.isTMDBAccountLabel("default"))
        #expect(FetchJob.isTMDBAccountLabel("0family.tv_2-x"))
        #expect(!FetchJob.isTMDBAccountLabel(""))
        #expect(!FetchJob.isTMDBAccountLabel("_x"))
        #expect(!FetchJob.isTMDBAccountLabel("가족"))
        #expect(!FetchJob.isTMDBAccountLabel(String(repeating: "a", count: 65)))
        #expect(FetchJob.isTMDBAccountLabel(String(repeating: "a", count: 64)))
    }

    @Test func aBuiltJobIsCheckedAsItsPayloadWouldBe() {
        let wrong: [FetchJob] = [
            .tmdbAccountList(account: "default", accountID: .object("../x"), list: .rated, page: 1),
            .tmdbAccountList(account: "default", accountID: .object(""), list: .rated, page: 1),
            .tmdbAccountList(account: "default", accountID: .number(0), list: .rated, page: 1),
        ]
        for job in wrong {
            #expect(throws: PayloadError.self) { try job.checked() }
        }
    }
}
