import MarqueeCore
import Testing

@Suite struct PayloadKindTests {
    @Test func readsTheTopLevelKind() {
        let job = FetchJob.tmdbMovie(id: 550, language: "ko-KR", follow: .none)
        #expect(PayloadKind.peek(job.encoded()) == "tmdb.movie")
        #expect(PayloadKind.peek(Array(#"{ "v" : 1 , "kind" : "image", "url": "x"}"#.utf8)) == "image")
        #expect(PayloadKind.peek(Array(#"{"v":1,"key":"k","kind":"boxoffice.entry"}"#.utf8)) == "boxoffice.entry")
    }

    @Test func everyRecordKindIsKnownIncludingJobOutcomes() {
        #expect(Record.Kind.allCases.allSatisfy { PayloadKind.known.contains($0.rawValue) })
        #expect(PayloadKind.known.contains("job.outcome"))
        #expect(
            PayloadKind.peek(Array(#"{"v":1,"kind":"job.outcome","key":"01J","fetched_at":1,"data":{}}"#.utf8))
                == "job.outcome"
        )
    }

    @Test func ignoresKindsInsideNestedValuesAndStrings() {
        #expect(PayloadKind.peek(Array(#"{"data":{"kind":"movie"},"v":1}"#.utf8)) == PayloadKind.unknown)
        #expect(PayloadKind.peek(Array(#"{"note":"\"kind\":\"movie\"","kind":"genre"}"#.utf8)) == "genre")
        #expect(PayloadKind.peek(Array(#"[{"kind":"movie"}]"#.utf8)) == PayloadKind.unknown)
    }

    @Test func unknownForAnythingElse() {
        for payload in [
            #"{"kind":"drop table"}"#, #"{"kind":7}"#, #"{"kind":{"a":1}}"#, "", "\u{FF}", #"{"kind":"movie"#, "{",
        ] {
            #expect(PayloadKind.peek(Array(payload.utf8)) == PayloadKind.unknown, "\(payload)")
        }
    }
}
