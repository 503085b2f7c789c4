import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct EnvelopeTests {
    @Test func headersSurviveARoundTrip() throws {
        var envelope = Envelope.root(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").child()
        envelope.attempt = 3
        envelope.notBefore = 1_700_000_000_000
        envelope.origin = "marquee.fetch/2/41"
        envelope.error = "HTTP 503 from api.themoviedb.org"
        envelope.errorKind = .transient
        let decoded = try Envelope(headers: envelope.headers.map { ($0.0, Optional($0.1)) })
        #expect(decoded == envelope)
    }

    @Test func theLastValueOfAHeaderWinsAndOthersAreIgnored() throws {
        let envelope = try Envelope(headers: [
            ("marquee-id", "first"), ("marquee-attempt", "2"), ("marquee-id", "second"), ("marquee-root", "root"),
            ("marquee-origin", "a/0/1"), ("marquee-origin", nil), ("x-other", "ignored"), ("marquee-attempt", "3"),
            ("marquee-error-kind", "permanent"), ("marquee-error-kind", "unheard-of"),
        ])
        #expect(envelope.id.rawValue == "second")
        #expect(envelope.root.rawValue == "root")
        #expect(envelope.attempt == 3)
        #expect(envelope.origin == "a/0/1")  // a header without a value leaves the one before
        #expect(envelope.errorKind == nil)  // the last value is not a kind
        #expect(envelope.parent == nil && envelope.notBefore == nil && envelope.error == nil)
        let empty = try #require(throws: PayloadError.self) { try Envelope(headers: [("marquee-id", "")]) }
        #expect(empty.field == "header marquee-id")
        let notBefore = try #require(throws: PayloadError.self) {
            try Envelope(headers: [("marquee-id", "x"), ("marquee-not-before", "-5")])
        }
        #expect(notBefore.field == "header marquee-not-before")
    }

    @Test func aChildKeepsTheRootAndNamesItsParent() {
        let root = Envelope.root()
        let child = root.child()
        let grandchild = child.child()
        #expect(root.parent == nil)
        #expect(child.root == root.id && child.parent == root.id && child.attempt == 1)
        #expect(grandchild.root == root.id && grandchild.parent == child.id)
        #expect(Set([root.id, child.id, grandchild.id]).count == 3)
    }

    @Test func theRefreshReasonIsAHeaderEveryDescendantInherits() throws {
        let root = Envelope.root(refresh: .backfill)
        #expect(root.headers.contains { $0 == ("marquee-refresh", "backfill") })
        let grandchild = root.child().children.child(output: 0, stage: "records", key: "movie:tmdb:movie:1")
        #expect(grandchild.refresh == .backfill)
        let decoded = try Envelope(headers: grandchild.headers.map { ($0.0, Optional($0.1)) })
        #expect(decoded.refresh == .backfill && decoded == grandchild)
        // None said, or one this program does not know: none (the fetch stage then takes the kind's).
        #expect(Envelope.root().headers.allSatisfy { $0.0 != "marquee-refresh" })
        #expect(try Envelope(headers: [("marquee-id", "x"), ("marquee-refresh", "whim")]).refresh == nil)
    }

    @Test func aRootsKindImpliesItsReasonAndAChangeFeedsDetailsAreChanges() {
        let follow = Follow(details: true)
        let list = FetchJob.tmdbList(list: .popular, page: 1, language: "en-US", region: nil, follow: follow)
        let changes = FetchJob.tmdbChanges(
            startDate: "2026-11-26",
            endDate: "2026-11-26",
            page: 1,
            languages: ["en-US"],
            follow: follow
        )
        #expect(RefreshReason.implied(by: list) == .list)
        #expect(
            RefreshReason.implied(by: .tmdbSearch(query: "x", page: 1, language: "en-US", year: nil, follow: follow))
                == .search
        )
        #expect(RefreshReason.implied(by: changes) == .change)
        #expect(RefreshReason.implied(by: .tmdbMovie(id: 1, language: "en-US", follow: follow)) == .request)
        #expect(RefreshReason.implied(by: .koficMovie(code: "1", follow: follow)) == .request)
        // A scheduled feed's details are changes; a scheduled list's stay scheduled.
        #expect(RefreshReason.schedule.spawned(by: changes) == .change)
        #expect(RefreshReason.schedule.spawned(by: list) == .schedule)
        #expect(RefreshReason.backfill.spawned(by: .tmdbMovie(id: 1, language: "en-US", follow: follow)) == .backfill)
    }

    @Test func missingIDAndBadAttemptAreNamed() throws {
        let missing = try #require(throws: PayloadError.self) { try Envelope(headers: []) }
        #expect(missing.field == "header marquee-id")
        let bad = try #require(throws: PayloadError.self) {
            try Envelope(headers: [("marquee-id", "x"), ("marquee-attempt", "zero")])
        }
        #expect(bad.field == "header marquee-attempt")
    }

    @Test(arguments: [
        ("marquee-id", String(decoding: [0x30, 0xFF, 0xFE, 0x31], as: UTF8.self)),
        ("marquee-id", "01JOB with spaces"),
        ("marquee-id", String(repeating: "A", count: 65)),
        ("marquee-root", "job.outcome:01JOB"),
        ("marquee-parent", "01\u{0}PARENT"),
    ])
    func anIDThatCannotBeAJobsIsRefusedNamingItsHeader(header: String, value: String) throws {
        var headers = [("marquee-id", "01HZY00000000000000000JOB1")]
        headers.removeAll { $0.0 == header }
        headers.append((header, value))
        let error = try #require(throws: PayloadError.self) { try Envelope(headers: headers.map { ($0.0, $0.1) }) }
        #expect(error.field == "header \(header)")
        #expect(error.description.contains("expected a job id"))
        #expect(error.description.unicodeScalars.allSatisfy { $0.value < 0x7F && $0.value >= 0x20 }, "\(error)")
    }

    @Test func ulidsUUIDsAndScriptIDsAreJobIDs() throws {
        for id in ["01HZY00000000000000000JOB1", "3f2b8c1e-6d4a-4f7b-9c2e-1a5b7d9e0f11", "id-7", "nightly_run_3"] {
            #expect(try Envelope(headers: [("marquee-id", id)]).id.rawValue == id)
        }
    }

    @Test func jobIDsAreULIDsSortedByTime() {
        let earlier = JobID.make(milliseconds: 1_700_000_000_000)
        let later = JobID.make(milliseconds: 1_700_000_000_001)
        #expect(earlier.rawValue.count == 26)
        #expect(earlier.rawValue < later.rawValue)
        #expect(JobID.make() != JobID.make())
        // The timestamp part reads back; anything but a ULID has none.
        #expect(earlier.milliseconds == 1_700_000_000_000)
        #expect(JobID.make(milliseconds: 0xFFFF_FFFF_FFFF).milliseconds == 0xFFFF_FFFF_FFFF)
        #expect(JobID(rawValue: "not-a-ulid").milliseconds == nil)
        #expect(JobID(rawValue: String(repeating: "U", count: 26)).milliseconds == nil)  // U is not Crockford
    }

    @Test func anOutputsChildIDDependsOnlyOnItsParentAndPlace() {
        let parent = Envelope.root(id: JobID.make(milliseconds: 1_700_000_000_123))
        let child = parent.child(output: 0, stage: "fetch", key: "tmdb:movie:1:ko-KR")
        // The same parent and place: the same id (a redelivered job re-sends its outputs under the same ids).
        #expect(parent.child(output: 0, stage: "fetch", key: "tmdb:movie:1:ko-KR") == child)
        #expect(child.root == parent.root && child.parent == parent.id && child.attempt == 1)
        #expect(child.id.milliseconds == 1_700_000_000_123, "sorts with its parent")
        // Any other place or parent: another id.
        let others = [
            parent.child(output: 1, stage: "fetch", key: "tmdb:movie:1:ko-KR"),
            parent.child(output: 0, stage: "images", key: "tmdb:movie:1:ko-KR"),
            parent.child(output: 0, stage: "fetch", key: "tmdb:movie:2:ko-KR"),
            Envelope.root().child(output: 0, stage: "fetch", key: "tmdb:movie:1:ko-KR"),
        ]
        #expect(Set(others.map(\.id) + [child.id]).count == 5)
    }

    @Test func childIDsAreTheIDsOfTheJoinedName() {
        // The child's name is hashed part by part (make bench-fetch): the ids must be those of the joined name
        // ("<id>\u{1F}<index>\u{1F}<stage>\u{1F}<key>") as before, pinned here (computed independently).
        let parent = Envelope.root(id: JobID(rawValue: "01HF7YAT3V00000000000004HM"))
        #expect(parent.id.milliseconds == 1_700_000_000_123)
        let cases: [(Int, String, String, String)] = [
            (0, "fetch", "tmdb:movie:1:ko-KR", "01HF7YAT3V4MQ81ES8FPXM4E7T"),
            (12, "records", "movie.localized:tmdb:movie:550:en-US", "01HF7YAT3VHGNYQHXW8JZTGHJP"),
            (3, "images", "image:https://x/\u{E9}.jpg", "01HF7YAT3V5GM37T9CFFZQFB84"),
        ]
        let children = parent.children
        for (index, stage, key, expected) in cases {
            let name = "\(parent.id.rawValue)\u{1F}\(index)\u{1F}\(stage)\u{1F}\(key)"
            #expect(parent.child(output: index, stage: stage, key: key).id.rawValue == expected)
            #expect(
                children.child(output: index, stage: stage, key: key)
                    == parent.child(output: index, stage: stage, key: key)
            )
            #expect(JobID.deterministic(milliseconds: 1_700_000_000_123, name: name).rawValue == expected)
        }
        let window = JobID.deterministic(milliseconds: 1_700_000_000_000, name: "window/2026-11-22/7")
        #expect(window.rawValue == "01HF7YAT002NT2RM0S4F22KZX5")
        // The timestamp of ids that are not ULIDs (lowercase, other characters, other lengths): none.
        let notULIDs = [
            "01hf7yat3v00000000000004hm", "01HF7YAT3U00000000000004HM", "01HF7YAT3V", "", "01HF7YAT3V00000000000004HMX",
        ]
        for raw in notULIDs {
            #expect(JobID(rawValue: raw).milliseconds == nil)
        }
    }
}

@Suite struct ImageJobAndRecordTests {
    @Test func imageJobRoundTripAndDedupeByURL() throws {
        let job = ImageJob(url: "https://image.tmdb.org/t/p/original/abc.jpg", owner: "tmdb:movie:550", role: .poster)
        #expect(try ImageJob.decode(job.encoded()) == job)
        #expect(job.dedupeKey == "image:https://image.tmdb.org/t/p/original/abc.jpg")
    }

    @Test func checkedIsDecodeOfTheJobsJSON() {
        // SourceResult checks image jobs with checked() rather than decode(json: job.json) (make bench-fetch): the
        // same jobs pass, and the others fail with the same error.
        let urls = [
            "https://image.tmdb.org/t/p/original/abc.jpg", "HTTP://h/x", "javascript:alert(1)", "ftp://host/x.jpg",
            "https://", "https:///x", "http://a b/c", "", "  ", "http://h/\u{7F}", "http://h/\u{85}x", "http://h/\r\n",
            "https://h/caf\u{E9}.jpg", "https://h/\u{2003}", "https://h/" + String(repeating: "a", count: 2038),
            "https://h/" + String(repeating: "a", count: 2039), "https://h/" + String(repeating: "\u{E9}", count: 2038),
            "https://h/" + String(repeating: "\u{E9}", count: 2039), "http://" + String(repeating: "x", count: 3000),
        ]
        let owners = [
            "tmdb:movie:550", "", " \t", "a\u{0}b", String(repeating: "o", count: 200),
            String(repeating: "o", count: 201),
            String(repeating: "\u{1F600}", count: 200), "\u{A0}", "x\u{9F}",
        ]
        for url in urls {
            for owner in owners {
                for role in ImageJob.Role.allCases {
                    let job = ImageJob(url: url, owner: owner, role: role)
                    let decoded = Result { () throws(PayloadError) in try ImageJob.decode(json: job.json) }
                    let checked = Result { () throws(PayloadError) in try job.checked() }
                    switch (decoded, checked) {
                    case (.success(let a), .success(let b)): #expect(a == b)
                    case (.failure(let a), .failure(let b)):
                        #expect(a.code == b.code && a.field == b.field && "\(a)" == "\(b)", "\(a) vs \(b)")
                    default: Issue.record("\(url.prefix(40)) \(owner.prefix(20)): \(decoded) vs \(checked)")
                    }
                }
            }
        }
    }

    @Test(arguments: ["javascript:alert(1)", "ftp://host/x.jpg", "https://", "https:///x", "http://a b/c"])
    func imageURLsMustBeHTTP(url: String) throws {
        let payload = JSONValue.object([
            "v": .integer(1), "kind": .string("image"), "url": .string(url), "owner": .string("o"),
            "role": .string("cover"),
        ])
        let error = try #require(throws: PayloadError.self) { try ImageJob.decode(payload.encoded()) }
        #expect(error.field == "url")
    }

    @Test func recordsKeepTheirDataAndCheckTheEnvelope() throws {
        let record = Record(
            kind: .movieLocalized,
            key: "tmdb:movie:550:ko-KR",
            fetchedAt: 1_700_000_000_000,
            data: ["title": .string("파이트 클럽")]
        )
        #expect(try Record.decode(record.encoded()) == record)
        let error = try #require(throws: PayloadError.self) {
            try Record.decode(Array(#"{"v":1,"kind":"movie","key":"k","fetched_at":"yesterday","data":{}}"#.utf8))
        }
        #expect(error.field == "fetched_at")
    }

    @Test func aRecordWrittenAfterOtherBytesAppendsItsEncoding() throws {
        let record = Record(
            kind: .movieLocalized,
            key: "tmdb:movie:550:ko-KR",
            fetchedAt: 1_700_000_000_000,
            data: ["title": .string("파이트 클럽")]
        )
        var writer = JSONWriter()
        writer.beginArray()
        writer.write(string: "earlier bytes")
        record.write(to: &writer)
        writer.endArray()
        #expect(writer.bytes == Array(#"["earlier bytes","#.utf8) + record.encoded() + Array("]".utf8))
        // A writer reused for the next record (the fetch stage's one buffer a job) writes it alone.
        writer.removeAll()
        record.write(to: &writer)
        #expect(writer.finish() == record.encoded())
        #expect(
            String(decoding: record.encoded(), as: UTF8.self).hasPrefix(
                #"{"data":{"title":"파이트 클럽"},"fetched_at":1700000000000,"#
            )
        )
    }
}
