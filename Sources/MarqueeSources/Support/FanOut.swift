import MarqueeCore

/// The follow-up rules every adapter shares (docs/records.md, "Follow-ups").
enum FanOut {
    /// The further pages a paged job queues: none unless it is page 1 (so later pages never queue duplicates),
    /// otherwise pages `2…min(follow.pages, totalPages, maxPage)`.
    static func pages(page: Int64, follow: Follow, totalPages: Int64?, maxPage: Int64) -> [Int64] {
        self.pages(page: page, lastPage: follow.pages, totalPages: totalPages, maxPage: maxPage)
    }

    /// The further pages a paged job queues when its extent is `lastPage`: pages `2…min(lastPage, totalPages,
    /// maxPage)` from page 1, none from any other page.
    static func pages(page: Int64, lastPage: Int64, totalPages: Int64?, maxPage: Int64) -> [Int64] {
        guard page == 1, let totalPages else { return [] }
        let last = min(lastPage, totalPages, maxPage)
        guard last >= 2 else { return [] }
        return Array(2...last)
    }

    /// What a detail job queued for a listed item follows: its images and reviews, never further details.
    static func detailFollow(_ follow: Follow) -> Follow {
        Follow(details: false, reviews: follow.reviews, images: follow.images, backdrops: follow.backdrops)
    }
}
