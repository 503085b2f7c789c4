import MarqueeImageStage
import Testing

@Suite struct RenditionTests {
    @Test func tmdbTakesTheSmallestSizeCoveringTheLargestVariant() {
        let original = "https://image.tmdb.org/t/p/original/kqjL17yufvn9OVLyXYpvtyrFfak.jpg"
        #expect(
            Rendition.pick(for: original, largestWidth: 500) == (
                "https://image.tmdb.org/t/p/w500/kqjL17yufvn9OVLyXYpvtyrFfak.jpg", "w500"
            )
        )
        #expect(Rendition.pick(for: original, largestWidth: 342).rendition == "w342")
        #expect(Rendition.pick(for: original, largestWidth: 343).rendition == "w500")
        #expect(Rendition.pick(for: original, largestWidth: 1000) == (original, "original"))
        #expect(Rendition.pick(for: original, largestWidth: 500, preferOriginal: true) == (original, "original"))
        // Any size in the URL is replaced; the emulator's CDN has the same shape under its own prefix.
        let emulator = "http://127.0.0.1:8930/tmdb-images/t/p/w92/abc.jpg"
        #expect(
            Rendition.pick(for: emulator, largestWidth: 185).url == "http://127.0.0.1:8930/tmdb-images/t/p/w185/abc.jpg"
        )
    }

    @Test func openLibraryCoversGoUpToL() {
        let cover = "https://covers.openlibrary.org/b/id/240727-L.jpg"
        #expect(Rendition.pick(for: cover, largestWidth: 500) == (cover, "L"))
        #expect(
            Rendition.pick(for: cover, largestWidth: 180) == ("https://covers.openlibrary.org/b/id/240727-M.jpg", "M")
        )
        #expect(
            Rendition.pick(for: "https://covers.openlibrary.org/b/isbn/0385472579-S.jpg", largestWidth: 900).rendition
                == "L"
        )
    }

    @Test func otherURLsAreTakenAsGiven() {
        for url in [
            "https://search1.kakaocdn.net/argon/130x130_85_c/36hQpoTrVZp", "https://image.tmdb.org/t/p/w999/x.jpg",
            "https://covers.openlibrary.org/b/id/240727-X.jpg", "https://example.org/t/p/",
        ] {
            #expect(Rendition.pick(for: url, largestWidth: 500) == (url, "as given"), "\(url)")
        }
    }
}
