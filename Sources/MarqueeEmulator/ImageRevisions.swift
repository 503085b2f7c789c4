import MarqueeJSON

/// Images changed upstream with `POST /_control {"changeImages": [name, …]}`: each change is a new revision of the
/// image, drawn from a new seed (new bytes, so a new `ETag`) and dated a day later (a new `Last-Modified`), so a
/// client revalidating it gets a `200` with the new bytes instead of a `304`. Deterministic: the same changes give
/// the same bytes.
///
/// An image's name is its upstream and the part of its path that does not depend on the size asked for:
/// `tmdb-images/<file>` (every `w…`/`original` rendition of that file changes together), `covers/<id|isbn|olid>/
/// <value>` (all of S, M and L) and `kakao-images/<path>`.
struct ImageRevisions: Sendable {
    private var revisions: [String: Int] = [:]

    /// The revision of `name`: 0 until it is changed.
    func revision(of name: String) -> Int { self.revisions[name] ?? 0 }

    /// Every changed image and its revision, for `GET /_control`.
    var json: JSON {
        .object(self.revisions.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
    }

    /// The names of a `changeImages` field: a string or an array of strings, each `<upstream>/<path>`.
    ///
    /// - Throws: ``ControlError`` when the value is not names of images.
    static func names(_ value: JSONValue) throws(ControlError) -> [String] {
        guard let names = value.strings else {
            throw ControlError(reason: "changeImages must be an image name or an array of them")
        }
        for name in names {
            let prefix = name.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            guard Self.upstreams.contains(prefix), name.count > prefix.count + 1 else {
                throw ControlError(
                    reason:
                        "changeImages: '\(name)' is not an image name (tmdb-images/<file>, covers/<id|isbn|olid>/<value> or kakao-images/<path>)"
                )
            }
        }
        return names
    }

    /// Makes the next revision of each of `names`.
    mutating func change(_ names: [String]) {
        for name in names { self.revisions[name, default: 0] += 1 }
    }

    /// `spec` at `revision`: the same size and format, drawn from another seed.
    static func spec(_ spec: ImageSpec, revision: Int) -> ImageSpec {
        guard revision > 0 else { return spec }
        var changed = spec
        changed.seed = StableHash.combine(spec.seed, 0x5EE1, UInt64(revision))
        return changed
    }

    /// `lastModified` (seconds since the epoch) at `revision`: a day later per revision.
    static func lastModified(_ lastModified: Int, revision: Int) -> Int { lastModified + revision * 86_400 }

    private static let upstreams: Set<String> = [
        Upstream.tmdbImages.rawValue, Upstream.covers.rawValue, Upstream.kakaoImages.rawValue,
    ]
}
