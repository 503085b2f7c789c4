import MarqueeCore
import MarqueeJSON
import MarqueeTestSupport
import Testing

@testable import MarqueeStore

/// `kofic.catalogue` records (KOFIC's movie list) in `kofic_catalogue`, beside `kofic_movies`, on both engines.
@Suite struct KOFICCatalogueStoreTests {
    static func entry(_ code: String, _ title: String, openDate: String?, at fetchedAt: Int64) -> Record {
        Record(
            kind: .koficCatalogue,
            key: "kofic:catalogue:\(code)",
            fetchedAt: fetchedAt,
            data: [
                "movie_cd": .string(code), "title": .string(title), "title_en": .string("Parasite"),
                "production_year": .integer(2019), "open_date": openDate.map(JSONValue.string) ?? .null,
                "type": .string("장편"), "production_status": .string("개봉"), "nation": .string("한국"),
                "genre": .string("드라마"), "nations": .array([.string("한국")]),
                "genres": .array([.string("드라마"), .string("코미디")]),
                "directors": .array([.object(["name": .string("봉준호")])]),
                "companies": .array([.object(["company_cd": .string("20122497"), "name": .string("(주)바른손이앤에이")])]),
            ]
        )
    }

    @Test("a listed movie is stored without its info, and its info is stored beside it", arguments: TestEngine.enabled)
    func listedMoviesAreStoredApartFromTheirInfo(engine: TestEngine) async throws {
        try await engine.withStore { store in
            let listed = try await store.write([Self.entry("20183782", "기생충", openDate: "2019-05-30", at: 1_000)])
            #expect(listed.rowsWritten == 1)
            let rows = try await store.engine.read(
                "SELECT title, title_norm, production_year, CAST(open_date AS TEXT), year, nation FROM kofic_catalogue",
                []
            )
            #expect(rows.count == 1)
            #expect(rows.first?[0] == .text("기생충"))
            #expect(rows.first?[2] == .int(2019))
            #expect(rows.first?[3] == .text("2019-05-30"))
            #expect(rows.first?[4] == .int(2019))
            #expect(rows.first?[5] == .text("한국"))
            #expect(try await store.engine.read("SELECT COUNT(*) FROM kofic_movies", []) == [[.int(0)]])
            #expect(try await store.counts().koficCatalogue == 1)

            // The info lands in kofic_movies; a later list page changes the catalogue row only.
            _ = try await store.write([Sample.koficMovie("20183782", "기생충", openDate: "2019-05-30", at: 2_000)])
            _ = try await store.write([Self.entry("20183782", "기생충 (흑백판)", openDate: nil, at: 3_000)])
            #expect(try await store.engine.read("SELECT title FROM kofic_movies", []) == [[.text("기생충")]])
            let later = try await store.engine.read(
                "SELECT title, CAST(open_date AS TEXT), year FROM kofic_catalogue",
                []
            )
            #expect(later == [[.text("기생충 (흑백판)"), .null, .int(2019)]])
            // An older list page changes nothing.
            let older = try await store.write([Self.entry("20183782", "기생충", openDate: "2019-05-30", at: 500)])
            #expect(older.rowsWritten == 0)
        }
    }

    @Test("a catalogue record whose key does not match its code is refused", arguments: TestEngine.enabled)
    func mismatchedKeysAreRefused(engine: TestEngine) async throws {
        try await engine.withStore { store in
            var wrong = Self.entry("20183782", "기생충", openDate: nil, at: 1_000)
            wrong.key = "kofic:catalogue:20183783"
            #expect { try Store.validate(wrong) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            var noList = Self.entry("20183782", "기생충", openDate: nil, at: 1_000)
            noList.data["directors"] = .string("봉준호")
            #expect { try Store.validate(noList) } throws: { ($0 as? StoreError)?.code == .invalidRecord }
            let rows = try await store.engine.read("SELECT COUNT(*) FROM kofic_catalogue", [])
            #expect(rows == [[.int(0)]])
        }
    }
}
