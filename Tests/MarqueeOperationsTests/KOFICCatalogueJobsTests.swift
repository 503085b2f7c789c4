import MarqueeCore
import Testing

@testable import MarqueeOperations

/// `marquee enqueue kofic-movies`: one page-1 job of KOFIC's movie list, its flags checked by name.
@Suite struct KOFICCatalogueJobsTests {
    @Test func theFlagsMakeOnePageOneJobThatRunsToTheEnd() throws {
        let jobs = try EnqueueJobs.koficCatalogue(
            .init(openFrom: 2020, openTo: 2024),
            follow: Follow(details: true, images: true)
        )
        #expect(
            jobs == [
                .koficMovies(
                    query: .init(openFrom: 2020, openTo: 2024, perPage: 100, lastPage: 1000),
                    page: 1,
                    follow: Follow(details: true, images: true)
                )
            ]
        )
    }

    @Test(arguments: [
        (FetchJob.KOFICMovieQuery(openFrom: 2024, openTo: 2020), "--open-to 2020 is before --open-from 2024"),
        (.init(productionFrom: 2010, productionTo: 2009), "--production-to 2009 is before --production-from 2010"),
        (.init(openFrom: 20), "--open-from must be a year from 1870 to 2200, not 20"),
        (.init(openTo: 20_240), "--open-to must be a year from 1870 to 2200, not 20240"),
        (.init(productionTo: 1869), "--production-to must be a year from 1870 to 2200, not 1869"),
        (.init(perPage: 500), "--per-page must be from 1 to 100, not 500"),
        (.init(lastPage: 0), "--pages must be from 1 to 1000, not 0"),
        (.init(title: "  "), "field 'title': must not be empty"),
    ])
    func badFlagsAreNamed(query: FetchJob.KOFICMovieQuery, message: String) {
        #expect(throws: OperationsError(.enqueue, message)) {
            try EnqueueJobs.koficCatalogue(query, follow: .none)
        }
    }
}
