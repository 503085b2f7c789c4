import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

@Suite struct KOFICAdapterTests {
    @Test func dailyBoxOfficeNumbersArriveAsStringsAndLeaveAsNumbers() throws {
        let job = FetchJob.koficDailyBoxOffice(date: "20220105", follow: .none)
        let result = try parse("kofic/daily_20220105.json", for: job)
        #expect(result.records(.boxOfficeEntry).count == 10)
        let first = try #require(result.record("kofic:daily:20220105:1"))
        #expect(first.data["period"] == .string("daily"))
        #expect(first.data["date"] == .string("2022-01-05"))
        #expect(first.data["show_range"] == .string("20220105~20220105"))
        #expect(first.data["show_range_start"] == .string("2022-01-05"))
        #expect(first.data["show_range_end"] == .string("2022-01-05"))
        #expect(first.data["rank"] == .integer(1))
        #expect(first.data["rank_change"] == .integer(0))
        #expect(first.data["is_new"] == .bool(true))
        #expect(first.data["movie_cd"] == .string("20199882"))
        #expect(first.data["movie_name"] == .string("경관의 피"))
        #expect(first.data["open_date"] == .string("2022-01-05"))
        #expect(first.data["sales_amount"] == .integer(584_559_330))
        #expect(first.data["sales_share"] == .number(34.2))
        #expect(first.data["sales_accumulated"] == .integer(631_402_330))
        #expect(first.data["audience_count"] == .integer(64050))
        #expect(first.data["audience_accumulated"] == .integer(69228))
        #expect(first.data["screen_count"] == .integer(1171))
        #expect(first.data["show_count"] == .integer(4416))

        let second = try #require(result.record("kofic:daily:20220105:2"))
        #expect(second.data["is_new"] == .bool(false))
        #expect(second.data["rank_change"] == .integer(-1))
        #expect(second.data["sales_change"] == .integer(-91_443_730))
        #expect(second.data["sales_change_rate"] == .number(-15.3))
        #expect(second.data["audience_change"] == .integer(-9564))
        #expect(second.data["audience_change_rate"] == .number(-15.9))
        #expect(second.data["audience_accumulated"] == .integer(6_252_827))

        // 특송 opened after the target date (preview screenings); the date is kept as sent.
        #expect(result.record("kofic:daily:20220105:6")?.data["open_date"] == .string("2022-01-12"))
        #expect(result.fetchJobs.isEmpty)
    }

    @Test func aSingleSpaceOpenDateIsNull() throws {
        let result = try parse("kofic/daily_20230426.json", for: .koficDailyBoxOffice(date: "20230426", follow: .none))
        let odyssey = try #require(result.record("kofic:daily:20230426:10"))
        #expect(odyssey.data["movie_name"] == .string("2001 스페이스 오디세이"))
        #expect(odyssey.data["open_date"] == .null)
        #expect(odyssey.data["movie_cd"] == .string("19688005"))
        #expect(odyssey.data["audience_count"] == .integer(1283))
        #expect(odyssey.data["sales_change_rate"] == .number(100))
    }

    @Test func aLeadingBlankLineIsTolerated() throws {
        let result = try parse("kofic/daily_20221214.json", for: .koficDailyBoxOffice(date: "20221214", follow: .none))
        #expect(result.records(.boxOfficeEntry).count == 10)
        #expect(result.records(.boxOfficeEntry).filter { $0.data["is_new"] == .bool(true) }.count == 3)
    }

    @Test func detailsAndImagesFollowUps() throws {
        let withDetails = try parse(
            "kofic/daily_20120101.json",
            for: .koficDailyBoxOffice(date: "20120101", follow: Follow(details: true, images: true))
        )
        #expect(withDetails.fetchJobs.count == 10)
        #expect(withDetails.fetchJobs.first == .koficMovie(code: "20112207", follow: Follow(images: true)))
        #expect(withDetails.record("kofic:daily:20120101:1")?.data["sales_change_rate"] == .number(-13))

        let imagesOnly = try parse(
            "kofic/daily_20120101.json",
            for: .koficDailyBoxOffice(date: "20120101", follow: Follow(images: true))
        )
        #expect(imagesOnly.fetchJobs.first == .kakaoPoster(query: "미션임파서블:고스트프로토콜 영화 포스터", movieCode: "20112207"))
        #expect(imagesOnly.fetchJobs.count == 10)
    }

    @Test func weeklyBoxOfficeKeysUseTheYearWeek() throws {
        let body = #"""
            {"boxOfficeResult":{"boxofficeType":"주말 박스오피스","showRange":"20120106~20120108","yearWeekTime":"201201",
            "weeklyBoxOfficeList":[{"rnum":"1","rank":"1","rankInten":"0","rankOldAndNew":"OLD","movieCd":"20112207",
            "movieNm":"미션임파서블:고스트프로토콜","openDt":"2011-12-15","salesAmt":"7840509500","salesShare":"35.8",
            "salesInten":"-1938574000","salesChange":"-19.8","salesAcc":"40541108500","audiCnt":"1007683",
            "audiInten":"-254375","audiChange":"-20.2","audiAcc":"5328435","scrnCnt":"697","showCnt":"9875"}]}}
            """#
        let job = FetchJob.koficWeeklyBoxOffice(date: "20120107", week: .weekend, follow: .none)
        let result = try testAdapters.parse(response(200, body), for: job, fetchedAt: testFetchedAt)
        let entry = try #require(result.record("kofic:weekend:201201:1"))
        #expect(entry.data["period"] == .string("weekend"))
        #expect(entry.data["year_week"] == .string("201201"))
        #expect(entry.data["date"] == .string("2012-01-06"))
        #expect(entry.data["show_range_end"] == .string("2012-01-08"))
        #expect(entry.data["audience_count"] == .integer(1_007_683))
        // A daily body for a weekly job is malformed.
        let error = parseError(try Fixtures.response("kofic/daily_20120101.json"), for: job)
        #expect(error?.code == .malformed)
    }

    @Test func movieInfoRecord() throws {
        let result = try parse("kofic/movieinfo_20124079.json", for: .koficMovie(code: "20124079", follow: .none))
        let movie = try #require(result.record("kofic:movie:20124079"))
        #expect(movie.kind == .koficMovie)
        #expect(movie.data["title"] == .string("광해, 왕이 된 남자"))
        #expect(movie.data["title_en"] == .string("Masquerade"))
        #expect(movie.data["title_original"] == .null)
        #expect(movie.data["runtime"] == .integer(131))
        #expect(movie.data["production_year"] == .integer(2012))
        #expect(movie.data["open_date"] == .string("2012-09-13"))
        #expect(movie.data["production_status"] == .string("개봉"))
        #expect(movie.data["type"] == .string("장편"))
        #expect(movie.data["nations"] == .array([.string("한국")]))
        #expect(movie.data["genres"] == .array([.string("사극"), .string("드라마")]))
        #expect(
            movie.data["directors"]
                == .array([.object(["name": .string("추창민"), "name_en": .string("CHOO Chang-min")])])
        )
        #expect(movie.data["actor_count"] == .integer(36))
        guard case .array(let actors)? = movie.data["actors"] else {
            Issue.record("actors is not an array")
            return
        }
        #expect(actors.count == KOFICParser.maxActors)
        #expect(
            actors.first
                == .object([
                    "name": .string("이병헌"), "name_en": .string("LEE Byung-hun"), "cast": .string("광해/하선"),
                    "cast_en": .null,
                ])
        )
        #expect(
            movie.data["audits"]
                == .array([.object(["audit_no": .string("2012-F610"), "watch_grade": .string("15세이상관람가")])])
        )
        #expect(result.fetchJobs.isEmpty)
    }

    @Test func movieInfoTrimsAuditNumbersAndQueuesAPosterSearch() throws {
        let result = try parse(
            "kofic/movieinfo_20199882.json",
            for: .koficMovie(code: "20199882", follow: Follow(images: true))
        )
        let movie = try #require(result.record("kofic:movie:20199882"))
        #expect(movie.data["title_en"] == .string("The Policeman’s Lineage"))
        #expect(
            movie.data["audits"]
                == .array([.object(["audit_no": .string("2021-MF03006"), "watch_grade": .string("15세이상관람가")])])
        )
        #expect(result.fetchJobs == [.kakaoPoster(query: "경관의 피 영화 포스터", movieCode: "20199882")])
    }

    @Test func movieInfoWithCRLFAndEmptyStaff() throws {
        let topGun = try parse("kofic/movieinfo_20194376.json", for: .koficMovie(code: "20194376", follow: .none))
        #expect(topGun.record("kofic:movie:20194376")?.data["title_en"] == .string("Top Gun: Maverick"))
        #expect(topGun.record("kofic:movie:20194376")?.data["open_date"] == .string("2022-06-22"))
        let smugglers = try parse("kofic/movieinfo_20218541.json", for: .koficMovie(code: "20218541", follow: .none))
        let movie = try #require(smugglers.record("kofic:movie:20218541"))
        #expect(movie.data["runtime"] == .integer(129))
        guard case .array(let actors)? = movie.data["actors"] else {
            Issue.record("actors is not an array")
            return
        }
        #expect(
            actors.first
                == .object(["name": .string("김혜수"), "name_en": .string("KIM Hye-soo"), "cast": .null, "cast_en": .null])
        )
    }

    @Test func quotaResetsAtTheNextMidnightInKorea() {
        // 2024-03-01T12:00:00Z is 21:00 in Korea: three hours to go.
        #expect(KOFICAdapter.untilNextMidnightKST(testFetchedAt) == .seconds(3 * 3600))
        // 2024-03-01T15:00:00Z is midnight in Korea: a full day to go.
        #expect(KOFICAdapter.untilNextMidnightKST(testFetchedAt + 3 * 3_600_000) == .seconds(86_400))
    }
}
