import MarqueeHTTP
import MarqueeImageStore

/// How the image stage downloads a URL it may have stored before, and what the answer means
/// (docs/image-store.md, "Revalidation").
///
/// The validators kept for the URL (``HTTPValidators``, shared by every image worker through the store) carry the
/// hash of the image they validate in ``HTTPValidators/content``. They are sent only while that image's manifest
/// is in the image store: a `304` then means the stored image and its variants stand. When the image is gone
/// (removed, or the store emptied), the validators are not trusted and the URL is downloaded in full.
enum Revalidation: Equatable {
    /// Download the whole body: nothing kept for the URL, validators that name no image, or an image no longer
    /// stored.
    case full
    /// Send the validators; a `304` means `stored` stands.
    case conditional(HTTPValidators, stored: ImageOutcome)

    /// The download for a URL whose kept validators are `validators` and whose image, as the image store has it
    /// now, is `stored` (`nil`: not stored, or not looked up).
    static func plan(validators: HTTPValidators?, stored: ImageOutcome?) -> Revalidation {
        guard let validators, !validators.isEmpty, let hash = validators.content, let stored, stored.sha256 == hash
        else { return .full }
        return .conditional(validators, stored: stored)
    }

    /// The hash whose manifest decides the plan: the validators' content when it is a valid image hash.
    static func storedHash(of validators: HTTPValidators?) -> String? {
        guard let validators, !validators.isEmpty, let hash = validators.content, ImageKey.isSHA256(hash) else {
            return nil
        }
        return hash
    }

    /// The conditional headers to send (`If-None-Match`, `If-Modified-Since`); none for a full download.
    var headers: [HTTPHeader] {
        guard case .conditional(let validators, _) = self else { return [] }
        var headers: [HTTPHeader] = []
        if let etag = validators.etag { headers.append(HTTPHeader(name: "If-None-Match", value: etag)) }
        if let lastModified = validators.lastModified {
            headers.append(HTTPHeader(name: "If-Modified-Since", value: lastModified))
        }
        return headers
    }

    /// The stored image a `304` confirms; `nil` when no validators were sent (a `304` is then an error).
    var notModified: ImageOutcome? {
        guard case .conditional(_, let stored) = self else { return nil }
        return stored
    }

    /// The validators to keep after a `200` whose body was stored as `sha256`: the response's, naming that image;
    /// `nil` when the response had none (the URL cannot be revalidated).
    static func kept(_ response: HTTPValidators?, sha256: String) -> HTTPValidators? {
        guard let response, !response.isEmpty else { return nil }
        return HTTPValidators(etag: response.etag, lastModified: response.lastModified, content: sha256)
    }
}
