public import Logging
public import MarqueeHTTP

/// An ``ImageStore`` in an S3 bucket (AWS S3, MinIO, R2, moto) over ``HTTPFetcher``, signed with AWS Signature
/// Version 4 by libcurl.
///
/// - ``exists(_:)`` is a `HEAD` (`404` → `false`).
/// - ``put(_:_:contentType:)`` checks ``exists(_:)`` first and uploads only a missing object: a `PUT` with
///   `Content-Type`, `Cache-Control: public, max-age=31536000, immutable` (content never changes under a key)
///   and `x-amz-content-sha256` (the body's hash, which the signature covers, so S3 rejects a corrupted upload).
///   An S3 `PUT` is atomic: readers see the old state or the whole object.
/// - ``get(_:)`` is a `GET` (`404` → `nil`).
///
/// Requests are ``FetchRequest/Purpose/api`` requests (the image-host allowlist and address policy apply to
/// image downloads only), so a loopback or private endpoint works; they share the fetcher's connection pool and
/// its limits for the endpoint's `host:port`.
///
/// - Important: The credentials need `s3:GetObject`, `s3:PutObject` and `s3:ListBucket`: without `ListBucket`,
///   S3 answers a `HEAD` of a missing key with `403`, which ``exists(_:)`` reports as ``ImageStoreError/Code/denied``.
public struct S3ImageStore: ImageStore {
    /// The bucket, prefix, region and endpoint.
    public let s3Location: S3Location
    private let credentials: S3Credentials
    private let fetcher: HTTPFetcher
    private let logger: Logger
    /// The largest object ``get(_:)`` accepts.
    public let maxObjectBytes: Int

    /// The canonical `s3://` location (no credentials).
    public var location: String { self.s3Location.description }

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - location: The parsed location.
    ///   - credentials: The signing credentials.
    ///   - fetcher: The HTTP client (shared with the process; not shut down by the store).
    ///   - logger: Receives one debug line per stored object.
    ///   - maxObjectBytes: The largest object ``get(_:)`` reads. Default: 64 MiB.
    public init(
        location: S3Location,
        credentials: S3Credentials,
        fetcher: HTTPFetcher,
        logger: Logger,
        maxObjectBytes: Int = 64 << 20
    ) {
        self.s3Location = location
        self.credentials = credentials
        self.fetcher = fetcher
        self.logger = logger
        self.maxObjectBytes = maxObjectBytes
    }

    /// The object's URL (path-style or virtual-hosted).
    public func url(for key: ImageKey) -> String { self.s3Location.objectURL(key) }

    /// `HEAD` of the object.
    public func exists(_ key: ImageKey) async throws(ImageStoreError) -> Bool {
        let response = try await self.send(.head, url: self.url(for: key), key: key)
        switch response.status {
        case 200: return true
        case 404: return false
        default: throw self.error(for: response, operation: "HEAD", key: key)
        }
    }

    /// `HEAD`, then a `PUT` when the object is missing.
    public func put(_ key: ImageKey, _ bytes: [UInt8], contentType: String) async throws(ImageStoreError) {
        if try await self.exists(key) {
            self.logger.debug("image already stored", metadata: [MarqueeImageStoreLoggingKeys.key: "\(key)"])
            return
        }
        let response = try await self.send(
            .put,
            url: self.url(for: key),
            key: key,
            body: bytes,
            headers: [
                HTTPHeader(name: "Content-Type", value: contentType),
                HTTPHeader(name: "Cache-Control", value: "public, max-age=31536000, immutable"),
            ]
        )
        guard response.status == 200 else { throw self.error(for: response, operation: "PUT", key: key) }
        self.logger.debug(
            "image stored",
            metadata: [
                MarqueeImageStoreLoggingKeys.key: "\(key)", MarqueeImageStoreLoggingKeys.bytes: "\(bytes.count)",
            ]
        )
    }

    /// `GET` of the object.
    public func get(_ key: ImageKey) async throws(ImageStoreError) -> [UInt8]? {
        let response = try await self.send(.get, url: self.url(for: key), key: key)
        switch response.status {
        case 200: return response.body
        case 404 where Self.errorCode(in: response) != "NoSuchBucket": return nil
        default: throw self.error(for: response, operation: "GET", key: key)
        }
    }

    /// `DELETE` of the object (S3 answers `204` whether or not it was there).
    public func delete(_ key: ImageKey) async throws(ImageStoreError) {
        let response = try await self.send(.delete, url: self.url(for: key), key: key)
        switch response.status {
        case 200, 204: return
        case 404 where Self.errorCode(in: response) != "NoSuchBucket": return
        default: throw self.error(for: response, operation: "DELETE", key: key)
        }
    }

    /// Creates the bucket (`PUT /<bucket>`); a bucket that exists and is ours is fine.
    ///
    /// For local stacks and tests (MinIO, moto); production buckets are provisioned outside the pipeline.
    ///
    /// - Throws: An ``ImageStoreError`` if the bucket cannot be created.
    public func createBucket() async throws(ImageStoreError) {
        var body: [UInt8] = []
        if self.s3Location.region != "us-east-1" {
            body = Array(
                ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<LocationConstraint>\(self.s3Location.region)</LocationConstraint></CreateBucketConfiguration>")
                    .utf8
            )
        }
        let response = try await self.send(.put, url: self.s3Location.bucketURL, key: nil, body: body)
        guard response.status == 200 || Self.errorCode(in: response) == "BucketAlreadyOwnedByYou" else {
            throw self.error(for: response, operation: "PUT bucket", key: nil)
        }
    }

    // MARK: - Requests

    private func send(
        _ method: FetchRequest.Method,
        url: String,
        key: ImageKey?,
        body: [UInt8]? = nil,
        headers: [HTTPHeader] = []
    ) async throws(ImageStoreError) -> FetchResponse {
        let payloadHash = body.map { ContentHash.sha256Hex($0) } ?? ContentHash.emptySHA256
        var request = FetchRequest(
            url: url,
            headers: headers + [HTTPHeader(name: "x-amz-content-sha256", value: payloadHash)],
            purpose: .api,
            method: method,
            body: body,
            awsSigV4: AWSSigV4(
                provider: "aws:amz:\(self.s3Location.region):s3",
                accessKeyID: self.credentials.accessKeyID,
                secretAccessKey: self.credentials.secretAccessKey,
                sessionToken: self.credentials.sessionToken
            )
        )
        request.isConditional = false
        request.maxBodyBytes = self.maxObjectBytes
        do {
            return try await self.fetcher.fetch(request)
        } catch {
            throw Self.error(for: error, operation: "\(method)", key: key, location: self.location)
        }
    }

    /// Sorts a transport failure: retriable ones (and a stopped fetcher) make the store unavailable.
    static func error(
        for error: HTTPFetchError,
        operation: String,
        key: ImageKey?,
        location: String
    )
        -> ImageStoreError
    {
        let code: ImageStoreError.Code
        switch error.code {
        case _ where error.isRetriable, .cancelled, .shutdown: code = .unavailable
        case .invalidURL, .invalidRequest, .tls, .hostNotAllowed, .addressNotAllowed: code = .invalidLocation
        default: code = .io
        }
        return ImageStoreError(
            code: code,
            reason: "S3 \(operation) at \(location) failed: \(error.code): \(error.reason)",
            key: key,
            underlying: error
        )
    }

    /// Sorts an S3 error response (status, and the `<Code>` of its XML body when there is one).
    private func error(for response: FetchResponse, operation: String, key: ImageKey?) -> ImageStoreError {
        let s3Code = Self.errorCode(in: response)
        var detail = "HTTP \(response.status)"
        if let s3Code { detail += " \(s3Code)" }
        if let message = Self.element("Message", in: response.body) {
            // S3 can quote the access key ID back ("The AWS Access Key Id you provided …"); keep credentials out.
            var scrubbed = message
            for secret in [self.credentials.accessKeyID, self.credentials.secretAccessKey]
                + (self.credentials.sessionToken.map { [$0] } ?? []) where !secret.isEmpty
            {
                scrubbed = scrubbed.replacing(secret, with: "REDACTED")
            }
            detail += ": \(scrubbed.prefix(300))"
        }
        let code: ImageStoreError.Code
        switch response.status {
        case 401, 403: code = .denied
        case 408, 429, 500...599: code = .unavailable
        case 404 where s3Code == "NoSuchBucket": code = .invalidLocation
        case 301, 307:
            code = .invalidLocation  // wrong region or endpoint for the bucket
        case 400 where s3Code == "AuthorizationHeaderMalformed" || s3Code == "InvalidBucketName":
            code = .invalidLocation
        default: code = .io
        }
        var reason = "S3 \(operation) at \(self.location) failed: \(detail)"
        if let region = response.header("x-amz-bucket-region"), region != self.s3Location.region {
            reason += " (the bucket is in region \(region))"
        }
        return ImageStoreError(code: code, reason: reason, key: key)
    }

    private static func errorCode(in response: FetchResponse) -> String? {
        self.element("Code", in: response.body)
    }

    /// The text of the first `<name>…</name>` in an S3 XML error body.
    private static func element(_ name: String, in body: [UInt8]) -> String? {
        guard !body.isEmpty, body.count < 64 * 1024 else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        guard let open = text.firstRange(of: "<\(name)>"),
            let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}
