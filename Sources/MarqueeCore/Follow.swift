import MarqueeJSON

/// How far a fetch job follows what it finds.
public struct Follow: Hashable, Sendable {
    /// For paged endpoints: the last page to fetch (this job's page included). 1 means only this page.
    public var pages: Int64 = 1
    /// Fetch the details of each listed item (TMDB movie details, KOFIC movie info, Open Library work).
    public var details: Bool = false
    /// Fetch reviews of each movie.
    public var reviews: Bool = false
    /// Emit image jobs for posters and covers.
    public var images: Bool = false
    /// Also emit image jobs for TMDB backdrops (wide stills, about as many again as posters).
    public var backdrops: Bool = false

    public init(
        pages: Int64 = 1,
        details: Bool = false,
        reviews: Bool = false,
        images: Bool = false,
        backdrops: Bool = false
    ) {
        self.pages = pages
        self.details = details
        self.reviews = reviews
        self.images = images
        self.backdrops = backdrops
    }

    public static let none = Follow()

    init(reading reader: PayloadReader?) throws(PayloadError) {
        guard var reader else {
            self = .none
            return
        }
        self.pages = try reader.optionalInt("pages", in: FieldRules.pages) ?? 1
        self.details = try reader.optionalBool("details") ?? false
        self.reviews = try reader.optionalBool("reviews") ?? false
        self.images = try reader.optionalBool("images") ?? false
        self.backdrops = try reader.optionalBool("backdrops") ?? false
        try reader.finish()
    }

    var json: JSONValue {
        var fields: JSONObject = [
            "pages": .integer(self.pages), "details": .bool(self.details), "reviews": .bool(self.reviews),
            "images": .bool(self.images),
        ]
        // Written only when asked for, so workers that predate the flag still read every other job.
        if self.backdrops { fields["backdrops"] = .bool(true) }
        return .object(fields)
    }

    /// Writes the member `follow` as ``json`` would be written, unless this is ``none`` (then left out, as
    /// ``FetchJob/json`` leaves it out).
    func write(to writer: inout JSONWriter) {
        guard self != .none else { return }
        writer.key("follow")
        writer.beginObject()
        if self.backdrops { writer.write("backdrops", true) }
        writer.write("details", self.details)
        writer.write("images", self.images)
        writer.write("pages", self.pages)
        writer.write("reviews", self.reviews)
        writer.endObject()
    }
}
