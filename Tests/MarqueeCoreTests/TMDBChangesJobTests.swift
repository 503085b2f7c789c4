import MarqueeCore
import MarqueeJSON
import Testing

/// The `tmdb.changes` payload: its defaults and each check, with the field each refusal names.
@Suite struct TMDBChangesJobTests {
    static func decode(_ json: String) -> Result<FetchJob, PayloadError> {
        Result { () throws(PayloadError) in try FetchJob.decode(Array(json.utf8)) }
    }

    @Test func theLeastPayloadTakesPageOneInEnglish() throws {
        let job = try FetchJob.decode(
            Array(#"{"v":1,"kind":"tmdb.changes","start_date":"2026-11-26","end_date":"2026-11-26"}"#.utf8)
        )
        #expect(
            job
                == .tmdbChanges(
                    startDate: "2026-11-26",
                    endDate: "2026-11-26",
                    page: 1,
                    languages: ["en-US"],
                    follow: .none
                )
        )
    }

    @Test func aFullPayloadReadsEveryField() throws {
        let job = try FetchJob.decode(
            Array(
                #"{"v":1,"kind":"tmdb.changes","start_date":"2026-11-13","end_date":"2026-11-26","page":1000,"#
                    .utf8
            )
                + Array(#""languages":["en-US","ko-KR"],"follow":{"reviews":true,"images":true}}"#.utf8)
        )
        #expect(
            job
                == .tmdbChanges(
                    startDate: "2026-11-13",
                    endDate: "2026-11-26",
                    page: 1000,
                    languages: ["en-US", "ko-KR"],
                    follow: Follow(reviews: true, images: true)
                )
        )
    }

    @Test(arguments: [
        (#""start_date":"2026-11-26""#, "end_date", "required"),
        (#""start_date":"26.11.2026","end_date":"2026-11-26""#, "start_date", "YYYY-MM-DD"),
        (#""start_date":"2026-02-30","end_date":"2026-03-01""#, "start_date", "YYYY-MM-DD"),
        (#""start_date":"2026-11-27","end_date":"2026-11-26""#, "end_date", "before start_date"),
        (#""start_date":"2026-11-12","end_date":"2026-11-26""#, "end_date", "spans 15 days"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","page":1001"#, "page", "1 to 1000"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","page":0"#, "page", "1 to 1000"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","languages":[]"#, "languages", "1 to 10"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","languages":"en""#, "languages", "an array"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","languages":[1]"#, "languages[0]", "a string"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","languages":["en","en"]"#, "languages[1]", "twice"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","languages":["english"]"#, "languages[0]", "ko-KR"),
        (#""start_date":"2026-11-26","end_date":"2026-11-26","region":"KR""#, "region", "unknown"),
    ])
    func badPayloadsAreRefusedNamingTheField(fields: String, field: String, reason: String) {
        let result = Self.decode(#"{"v":1,"kind":"tmdb.changes","# + fields + "}")
        guard case .failure(let error) = result else {
            Issue.record("\(fields) was accepted: \(result)")
            return
        }
        #expect(error.field == field, "\(fields): \(error)")
        #expect("\(error)".contains(reason), "\(fields): \(error)")
    }

    @Test func fourteenDaysIsTheLongestWindow() throws {
        let longest = FetchJob.tmdbChanges(
            startDate: "2026-11-13",
            endDate: "2026-11-26",
            page: 1,
            languages: ["en-US"],
            follow: .none
        )
        #expect(try longest.checked() == longest)
        let tooLong = FetchJob.tmdbChanges(
            startDate: "2026-11-12",
            endDate: "2026-11-26",
            page: 1,
            languages: ["en-US"],
            follow: .none
        )
        #expect(throws: PayloadError.self) { try tooLong.checked() }
    }
}
