import MarqueeCore
import MarqueeJSON
import Testing

@testable import MarqueeSources

@Suite struct OpenLibraryAdapterTests {
    @Test func searchDocsBecomeBooks() throws {
        let job = FetchJob.openLibrarySearch(query: "apple", page: 1, limit: 2, follow: .none)
        let result = try parse("openlibrary/search_q_apple_limit2.json", for: job)
        #expect(result.records(.book).count == 2)
        let book = try #require(result.record("openlibrary:work:OL8998077W"))
        #expect(book.data["work_id"] == .string("OL8998077W"))
        #expect(book.data["edition_id"] == .null)
        #expect(book.data["title"] == .string("Apple Delights Cookbook"))
        #expect(
            book.data["authors"]
                == .array([.object(["name": .string("Karen Jean Matsko Hood"), "key": .string("OL3128500A")])])
        )
        #expect(book.data["first_publish_year"] == .integer(2004))
        #expect(book.data["cover_id"] == .integer(2_955_048))
        #expect(book.data["edition_count"] == .integer(80))
        guard case .array(let isbns)? = book.data["isbn"] else {
            Issue.record("isbn is not an array")
            return
        }
        #expect(isbns.count == OpenLibraryParser.maxISBNs)
        #expect(isbns.prefix(2) == [.string("1596498188"), .string("9781596498624")])
        guard case .array(let languages)? = book.data["languages"] else {
            Issue.record("languages is not an array")
            return
        }
        #expect(languages.contains(.string("kor")))
    }

    @Test func pageOneFansOutByNumFoundAndLimit() throws {
        // numFound 26065 with limit 2 is 13033 pages; follow.pages bounds it.
        let follow = Follow(pages: 3)
        let job = FetchJob.openLibrarySearch(query: "apple", page: 1, limit: 2, follow: follow)
        let result = try parse("openlibrary/search_q_apple_limit2.json", for: job)
        #expect(
            result.fetchJobs == [2, 3].map { .openLibrarySearch(query: "apple", page: $0, limit: 2, follow: follow) }
        )
        let later = try parse(
            "openlibrary/search_q_apple_limit2.json",
            for: .openLibrarySearch(query: "apple", page: 3, limit: 2, follow: follow)
        )
        #expect(later.fetchJobs.isEmpty)
    }

    @Test func editionKeysNeverBecomeWorkKeys() throws {
        let job = FetchJob.openLibrarySearch(
            query: "denver,co",
            page: 1,
            limit: 20,
            follow: Follow(details: true, images: true)
        )
        let result = try parse("openlibrary/search_q_denver_co.json", for: job)
        #expect(result.records(.book).count == 20)
        let edition = try #require(result.record("openlibrary:edition:OL10910782M"))
        #expect(edition.data["work_id"] == .null)
        #expect(edition.data["edition_id"] == .string("OL10910782M"))
        #expect(edition.data["title"] == .string("Denver, Co Vicinity (City Wall Maps)"))
        #expect(edition.data["authors"] == .array([]))
        #expect(result.record("openlibrary:work:OL10910782M") == nil)
        #expect(result.records.filter { $0.key.hasPrefix("openlibrary:edition:") }.count == 4)
        #expect(result.record("openlibrary:edition:OL22205996M")?.data["first_publish_year"] == .null)

        // 16 works → 16 work jobs carrying images; no work job for an edition.
        let detailFollow = Follow(images: true)
        #expect(result.fetchJobs.count == 16)
        #expect(result.fetchJobs.contains(.openLibraryWork(id: "OL19500062W", follow: detailFollow)))
        #expect(!result.fetchJobs.contains { $0.dedupeKey.hasSuffix("M") })
        // The editions have no cover_i, and work covers are left to the work jobs.
        #expect(result.imageJobs.isEmpty)
    }

    @Test func coversWithoutDetailsAndNoneWithoutCoverID() throws {
        let job = FetchJob.openLibrarySearch(query: "denver,co", page: 1, limit: 20, follow: Follow(images: true))
        let result = try parse("openlibrary/search_q_denver_co.json", for: job)
        // 9 of the 20 docs have a cover_i.
        #expect(result.imageJobs.count == 9)
        #expect(
            result.imageJobs.contains(
                ImageJob(
                    url: "https://covers.openlibrary.org/b/id/1847337-L.jpg",
                    owner: "openlibrary:work:OL8808821W",
                    role: .cover
                )
            )
        )
        // The first doc (OL8503198W, "Denver, Co") has no cover_i: no image job, a null cover_id.
        #expect(!result.imageJobs.contains { $0.owner == "openlibrary:work:OL8503198W" })
        #expect(result.record("openlibrary:work:OL8503198W")?.data["cover_id"] == .null)
        // Title with a double space is kept as sent.
        #expect(
            result.record("openlibrary:work:OL8415118W")?.data["title"]
                == .string("Five Points Neighborhood of Denver  (CO)")
        )
        // Two authors pair names with keys.
        #expect(
            result.record("openlibrary:work:OL27674149W")?.data["authors"]
                == .array([
                    .object(["name": .string("Dave Tasto"), "key": .string("OL9802020A")]),
                    .object(["name": .string("Vanessa Sutton"), "key": .string("OL10333974A")]),
                ])
        )
    }

    @Test func workBecomesABookWithDescriptionAndCover() throws {
        let body = #"""
            {"title": "Fantastic Mr Fox", "covers": [-1, 6498519, 8904777], "key": "/works/OL45804W",
             "authors": [{"author": {"key": "/authors/OL34184A"}, "type": {"key": "/type/author_role"}}],
             "type": {"key": "/type/work"}, "description": {"type": "/type/text", "value": "The Fox family outwits three farmers."},
             "subjects": ["Animals", "Foxes", "Animals"], "first_publish_date": "October 1, 1988"}
            """#
        let job = FetchJob.openLibraryWork(id: "OL45804W", follow: Follow(images: true))
        let result = try testAdapters.parse(response(200, body), for: job, fetchedAt: testFetchedAt)
        let book = try #require(result.record("openlibrary:work:OL45804W"))
        #expect(book.data["title"] == .string("Fantastic Mr Fox"))
        #expect(book.data["description"] == .string("The Fox family outwits three farmers."))
        #expect(book.data["author_keys"] == .array([.string("OL34184A")]))
        #expect(book.data["subjects"] == .array([.string("Animals"), .string("Foxes")]))
        #expect(book.data["covers"] == .array([.integer(6_498_519), .integer(8_904_777)]))
        #expect(book.data["cover_id"] == .integer(6_498_519))
        #expect(
            result.imageJobs == [
                ImageJob(
                    url: "https://covers.openlibrary.org/b/id/6498519-L.jpg",
                    owner: "openlibrary:work:OL45804W",
                    role: .cover
                )
            ]
        )
    }

    @Test func redirectedWorksAreFollowed() throws {
        let body = #"{"type": {"key": "/type/redirect"}, "location": "/works/OL1W", "key": "/works/OL2W"}"#
        let job = FetchJob.openLibraryWork(id: "OL2W", follow: Follow(images: true))
        let result = try testAdapters.parse(response(200, body), for: job, fetchedAt: testFetchedAt)
        #expect(result.records.isEmpty)
        #expect(result.fetchJobs == [.openLibraryWork(id: "OL1W", follow: Follow(images: true))])
    }

    @Test func otherOpenLibraryShapesAreMalformedForAWork() throws {
        let job = FetchJob.openLibraryWork(id: "OL45804W", follow: .none)
        for fixture in ["openlibrary/subjects_denver.json", "openlibrary/books_api_isbn_0385472579_jscmd_data.json"] {
            #expect(parseError(try Fixtures.response(fixture), for: job)?.code == .malformed)
        }
        let search = FetchJob.openLibrarySearch(query: "denver", page: 1, limit: 10, follow: .none)
        #expect(parseError(try Fixtures.response("openlibrary/subjects_denver.json"), for: search)?.code == .malformed)
    }
}
