/// Kakao (Daum) image search: `v2/search/image`, with image URLs pointing at this emulator.
struct Kakao: Sendable {
    let catalogue: Catalogue

    static func error(_ status: Int, _ type: String, _ message: String) -> EmulatorResponse {
        .json(.object([("errorType", .string(type)), ("message", .string(message))]), status: status)
    }

    /// The 401 for a missing or unknown key; Kakao echoes the key it could not use.
    static func invalidKey(_ key: String?) -> EmulatorResponse {
        guard let key else { return Self.error(401, "AccessDeniedError", "cannot find Authorization : KakaoAK header") }
        return Self.error(401, "AccessDeniedError", "wrong appKey(\(key)) format")
    }

    private static let sites: [(collection: String, site: String, host: String)] = [
        ("blog", "네이버블로그", "https://blog.naver.com"),
        ("blog", "티스토리", "https://movie-notes.tistory.com"),
        ("cafe", "다음카페", "https://cafe.daum.net"),
        ("news", "씨네21", "http://www.cine21.com/news/view"),
        ("news", "스포츠조선", "https://sports.chosun.com/news2/utype.htm"),
        ("etc", "", "http://www.example.co.kr"),
        ("blog", "브런치", "https://brunch.co.kr"),
    ]

    func search(_ request: EmulatorRequest, host: String) -> EmulatorResponse {
        guard let query = request.query["query"], !query.trimmingSpaces.isEmpty else {
            return Self.error(400, "MissingParameter", "query parameter required")
        }
        let sort = request.query["sort"] ?? "accuracy"
        guard sort == "accuracy" || sort == "recency" else {
            return Self.error(400, "InvalidArgument", "sort is not valid")
        }
        let page = request.int("page") ?? 1
        let size = request.int("size") ?? 80
        guard page >= 1 else { return Self.error(400, "InvalidArgument", "page is less than min") }
        guard page <= 50 else { return Self.error(400, "InvalidArgument", "page is more than max") }
        guard size >= 1 else { return Self.error(400, "InvalidArgument", "size is less than min") }
        guard size <= 80 else { return Self.error(400, "InvalidArgument", "size is more than max") }

        let queryHash = StableHash.bytes(Array(query.utf8))
        var totals = SeededRandom(self.catalogue.seed, 0x4A4A0, queryHash)
        let total = totals.chance(0.05) ? totals.int(0...40) : totals.int(50...5_000_000)
        let pageable = min(total, totals.int(800...3800))
        let start = (page - 1) * size
        let end = min(pageable, start + size)
        let reference = self.catalogue.referenceDay
        let documents: [JSON] =
            start < end
            ? (start..<end).map { position in
                var random = SeededRandom(self.catalogue.seed, 0x4A4A1, queryHash, UInt64(position))
                let site = random.pick(Self.sites)
                // Posters are portrait; the first results of a query are usually posters.
                let portrait = position < 3 || random.chance(0.55)
                let width = portrait ? random.int(300...1000) : random.int(500...1600)
                let height = portrait ? width * random.int(135...150) / 100 : width * random.int(50...80) / 100
                let token = StableHash.hex(random.next(), width: 16)
                let daysAgo = sort == "recency" ? position / 3 : random.int(0...2500)
                let day = reference.adding(-daysAgo)
                let datetime =
                    "\(day.iso)T\(Day.pad(random.int(0...23), 2)):\(Day.pad(random.int(0...59), 2)):00.000+09:00"
                let docPath =
                    "/\(TextGenerator.latinTitle(&random).lowercased().replacingSpaces)/\(random.int(100_000...999_999_999))"
                return .object([
                    ("collection", .string(site.collection)),
                    ("datetime", .string(datetime)),
                    ("display_sitename", .string(site.site)),
                    ("doc_url", .string(site.host + docPath)),
                    ("height", .int(height)),
                    ("image_url", .string("http://\(host)/kakao-images/\(token)_\(width)x\(height).jpg")),
                    (
                        "thumbnail_url",
                        .string("http://\(host)/kakao-images/t/\(token)_130x\(130 * height / width).jpg")
                    ),
                    ("width", .int(width)),
                ])
            } : []
        return .json(
            .object([
                ("documents", .array(documents)),
                (
                    "meta",
                    .object([
                        ("is_end", .bool(page * size >= pageable)),
                        ("pageable_count", .int(pageable)),
                        ("total_count", .int(total)),
                    ])
                ),
            ]),
            lastModified: reference.epochSeconds
        )
    }

    /// Decodes `/kakao-images/{token}_{w}x{h}.jpg` (or `/kakao-images/t/…`) into an image to render.
    static func image(path: Substring, seed: UInt64) -> ImageSpec? {
        var name = path
        var thumbnail = false
        if name.hasPrefix("t/") {
            thumbnail = true
            name = name.dropFirst(2)
        }
        guard name.hasSuffix(".jpg") else { return nil }
        name = name.dropLast(4)
        let parts = name.split(separator: "_")
        guard parts.count == 2, parts[0].count == 16, let token = UInt64(parts[0], radix: 16) else { return nil }
        let size = parts[1].split(separator: "x")
        guard size.count == 2, let width = Int(size[0]), let height = Int(size[1]),
            (16...2000).contains(width), (16...3000).contains(height)
        else { return nil }
        return ImageSpec(
            seed: StableHash.combine(seed, token),
            width: width,
            height: height,
            format: .jpeg,
            orientation: 1,
            quality: thumbnail ? 70 : 85
        )
    }
}

extension String {
    var replacingSpaces: String { String(self.map { $0 == " " ? "-" : $0 }) }
}
