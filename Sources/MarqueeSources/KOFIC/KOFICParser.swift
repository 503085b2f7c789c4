import MarqueeCore
import MarqueeJSON

/// Builds the records and follow-ups of KOFIC responses (docs/records.md).
struct KOFICParser {
    let fetchedAt: Int64
    var result = SourceResult()

    /// At most this many actors go into a `kofic.movie` record (KOFIC lists them in billing order).
    static let maxActors = 20

    init(fetchedAt: Int64) {
        self.fetchedAt = fetchedAt
    }

    /// `boxoffice.entry` records of a daily or weekly list, and each movie's follow-ups.
    mutating func boxOffice(
        _ list: [JSONValue],
        result: JSONValue,
        period: String,
        requestedDate: String,
        follow: Follow
    ) {
        let showRange = result["showRange"]?.trimmedText
        let rangeParts = showRange?.split(separator: "~").map {
            ISODate.normalized(String($0).trimmingASCIIWhitespace())
        }
        let start = rangeParts?.first ?? nil
        let end = rangeParts.flatMap { $0.count == 2 ? $0[1] : nil }
        let yearWeek = result["yearWeekTime"]?.trimmedText
        let isDaily = period == "daily"
        // The key's period segment: the day for daily lists, KOFIC's yearWeekTime for weekly ones.
        let periodKey: String
        if isDaily {
            periodKey = start.flatMap(ISODate.compact) ?? requestedDate
        } else {
            periodKey = yearWeek ?? start.flatMap(ISODate.compact) ?? requestedDate
        }
        for entry in list {
            guard let rank = entry["rank"]?.int else { continue }
            let movieCode = entry["movieCd"]?.trimmedText
            let movieName = entry["movieNm"]?.trimmedText
            let data: JSONObject = [
                "period": .string(period),
                "date": .of(isDaily ? start ?? ISODate.normalized(requestedDate) : start),
                "year_week": .of(isDaily ? nil : yearWeek),
                "show_range": .of(showRange),
                "show_range_start": .of(start),
                "show_range_end": .of(end),
                "rank": .integer(rank),
                "rank_change": .of(entry["rankInten"]?.int),
                "is_new": .of(entry["rankOldAndNew"]?.trimmedText.map { $0.uppercased() == "NEW" }),
                "movie_cd": .of(movieCode),
                "movie_name": .of(movieName),
                "open_date": .of(entry["openDt"]?.isoDate),
                "sales_amount": .of(entry["salesAmt"]?.int),
                "sales_share": .of(entry["salesShare"]?.double),
                "sales_change": .of(entry["salesInten"]?.int),
                "sales_change_rate": .of(entry["salesChange"]?.double),
                "sales_accumulated": .of(entry["salesAcc"]?.int),
                "audience_count": .of(entry["audiCnt"]?.int),
                "audience_change": .of(entry["audiInten"]?.int),
                "audience_change_rate": .of(entry["audiChange"]?.double),
                "audience_accumulated": .of(entry["audiAcc"]?.int),
                "screen_count": .of(entry["scrnCnt"]?.int),
                "show_count": .of(entry["showCnt"]?.int),
            ]
            self.result.records.append(
                Record(
                    kind: .boxOfficeEntry,
                    key: "kofic:\(period):\(periodKey):\(rank)",
                    fetchedAt: self.fetchedAt,
                    data: data
                )
            )
            guard let movieCode else { continue }
            self.followListed(movieCode, name: movieName, follow: follow)
        }
    }

    /// A listed movie's follow-ups: its info (which then finds the poster) when details are asked for, else its
    /// poster search when images are.
    private mutating func followListed(_ movieCode: String, name: String?, follow: Follow) {
        if follow.details {
            self.result.add(.koficMovie(code: movieCode, follow: FanOut.detailFollow(follow)))
        } else if follow.images, let name {
            self.result.add(.kakaoPoster(query: Self.posterQuery(name), movieCode: movieCode))
        }
    }

    /// `kofic.catalogue` records of a page of KOFIC's movie list, and each movie's follow-ups. Entries without a
    /// `movieCd` are left out (noted in ``SourceResult/skipped``).
    mutating func movieList(_ list: [JSONValue], follow: Follow) {
        for entry in list {
            guard let code = entry["movieCd"]?.trimmedText else {
                self.result.skipped.append("a kofic.movies entry without movieCd")
                continue
            }
            let name = entry["movieNm"]?.trimmedText
            let data: JSONObject = [
                "movie_cd": .string(code),
                "title": .of(name),
                "title_en": .of(entry["movieNmEn"]?.trimmedText),
                "production_year": .of(entry["prdtYear"]?.int),
                "open_date": .of(entry["openDt"]?.isoDate),
                "type": .of(entry["typeNm"]?.trimmedText),
                "production_status": .of(entry["prdtStatNm"]?.trimmedText),
                "nation": .of(entry["repNationNm"]?.trimmedText),
                "genre": .of(entry["repGenreNm"]?.trimmedText),
                "nations": .of(Self.commaList(entry["nationAlt"])),
                "genres": .of(Self.commaList(entry["genreAlt"])),
                "directors": .array(
                    (entry["directors"]?.arrayValue ?? []).compactMap { person in
                        person["peopleNm"]?.trimmedText.map { .object(["name": .string($0)]) }
                    }
                ),
                "companies": .array(
                    (entry["companys"]?.arrayValue ?? []).compactMap { company in
                        guard let name = company["companyNm"]?.trimmedText else { return nil }
                        return .object(["company_cd": .of(company["companyCd"]?.trimmedText), "name": .string(name)])
                    }
                ),
            ]
            self.result.records.append(
                Record(kind: .koficCatalogue, key: "kofic:catalogue:\(code)", fetchedAt: self.fetchedAt, data: data)
            )
            self.followListed(code, name: name, follow: follow)
        }
    }

    /// KOFIC's `…Alt` fields: names joined by commas (`"인도,프랑스,미국"`), blank parts dropped.
    static func commaList(_ value: JSONValue?) -> [String] {
        guard let text = value?.trimmedText else { return [] }
        return text.split(separator: ",").map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
    }

    /// The `kofic.movie` record of a `movieInfo`, and its poster search.
    mutating func movie(_ info: JSONValue, code: String, follow: Follow) {
        let name = info["movieNm"]?.trimmedText
        let actors = info["actors"]?.arrayValue ?? []
        let data: JSONObject = [
            "movie_cd": .string(code),
            "title": .of(name),
            "title_en": .of(info["movieNmEn"]?.trimmedText),
            "title_original": .of(info["movieNmOg"]?.trimmedText),
            "production_year": .of(info["prdtYear"]?.int),
            "open_date": .of(info["openDt"]?.isoDate),
            "runtime": .of(info["showTm"]?.int.flatMap { $0 > 0 ? $0 : nil }),
            "production_status": .of(info["prdtStatNm"]?.trimmedText),
            "type": .of(info["typeNm"]?.trimmedText),
            "nations": .of(Self.names(info["nations"], field: "nationNm")),
            "genres": .of(Self.names(info["genres"], field: "genreNm")),
            "directors": .array(
                (info["directors"]?.arrayValue ?? []).compactMap { person in
                    guard let name = person["peopleNm"]?.trimmedText else { return nil }
                    return .object(["name": .string(name), "name_en": .of(person["peopleNmEn"]?.trimmedText)])
                }
            ),
            "actors": .array(
                actors.compactMap { person -> JSONValue? in
                    guard let name = person["peopleNm"]?.trimmedText else { return nil }
                    return .object([
                        "name": .string(name),
                        "name_en": .of(person["peopleNmEn"]?.trimmedText),
                        "cast": .of(person["cast"]?.trimmedText),
                        "cast_en": .of(person["castEn"]?.trimmedText),
                    ])
                }.prefix(Self.maxActors).map { $0 }
            ),
            "actor_count": .integer(Int64(actors.count)),
            "show_types": .of(Self.names(info["showTypes"], field: "showTypeNm")),
            "companies": .array(
                (info["companys"]?.arrayValue ?? []).compactMap { company in
                    guard let name = company["companyNm"]?.trimmedText else { return nil }
                    return .object([
                        "company_cd": .of(company["companyCd"]?.trimmedText),
                        "name": .string(name),
                        "name_en": .of(company["companyNmEn"]?.trimmedText),
                        "part": .of(company["companyPartNm"]?.trimmedText),
                    ])
                }
            ),
            "audits": .array(
                (info["audits"]?.arrayValue ?? []).compactMap { audit in
                    let number = audit["auditNo"]?.trimmedText
                    let grade = audit["watchGradeNm"]?.trimmedText
                    guard number != nil || grade != nil else { return nil }
                    return .object(["audit_no": .of(number), "watch_grade": .of(grade)])
                }
            ),
        ]
        self.result.records.append(
            Record(kind: .koficMovie, key: "kofic:movie:\(code)", fetchedAt: self.fetchedAt, data: data)
        )
        if follow.images, let name {
            self.result.add(.kakaoPoster(query: Self.posterQuery(name), movieCode: code))
        }
    }

    /// The image search for a movie's poster: the title and "영화 포스터" ("movie poster"), the query the recorded
    /// Kakao fixtures were made with; the word 영화 keeps short titles (드림, 밀수) from matching other things.
    static func posterQuery(_ movieName: String) -> String {
        "\(movieName) 영화 포스터"
    }

    static func names(_ value: JSONValue?, field: String) -> [String] {
        (value?.arrayValue ?? []).compactMap { $0[field]?.trimmedText }
    }
}
