public import Logging
public import MarqueeHTTP

/// Creates the ``ImageStore`` a location names (`MARQUEE_IMAGE_STORE`).
public enum ImageStores {
    /// The default location: `file://./var/images`.
    public static let defaultLocation = "file://./var/images"

    /// Creates the store for `location`.
    ///
    /// - `file://./var/images` (relative to the current directory) or `file:///abs/path` → ``FileImageStore``
    ///   (the folder is created).
    /// - `s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1[&path_style=true]` →
    ///   ``S3ImageStore`` (see ``S3Location``), with credentials from `AWS_ACCESS_KEY_ID`,
    ///   `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (or their `_FILE` forms, see
    ///   ``S3Credentials/fromEnvironment(_:)``).
    ///
    /// - Parameters:
    ///   - location: The location.
    ///   - environment: The process environment (credentials, region).
    ///   - fetcher: The HTTP client an S3 store uses; `nil` creates one with the default configuration for the store
    ///     (its thread stops when the store is released). Unused by the file store.
    ///   - logger: The store's logger.
    /// - Returns: The store.
    /// - Throws: An ``ImageStoreError``: ``ImageStoreError/Code/invalidLocation`` for an unknown scheme, a malformed
    ///   location or missing credentials; the file store's errors when its folder cannot be created.
    public static func make(
        location: String,
        environment: [String: String],
        fetcher: HTTPFetcher?,
        logger: Logger
    ) throws(ImageStoreError) -> any ImageStore {
        var logger = logger
        if location.hasPrefix("file://") {
            let path = String(location.dropFirst("file://".count))
            guard !path.isEmpty, !path.contains("?"), !path.contains("#") else {
                throw ImageStoreError(
                    code: .invalidLocation,
                    reason: "invalid file:// image store location: use file://./relative/path or file:///absolute/path"
                )
            }
            if !path.hasPrefix("/"), !path.hasPrefix(".") {
                // file://host/path is a remote file URL; only local paths make sense here.
                throw ImageStoreError(
                    code: .invalidLocation,
                    reason: "invalid file:// image store location: \"\(path)\" must start with / or ./ "
                        + "(file:///absolute/path or file://./relative/path)"
                )
            }
            let root = try POSIXFiles.absolute(path)
            logger[metadataKey: MarqueeImageStoreLoggingKeys.location] = "file://\(root)"
            return try FileImageStore(root: root, logger: logger)
        }
        if location.hasPrefix("s3://") {
            let parsed = try S3Location(parsing: location, environment: environment)
            let credentials = try S3Credentials.fromEnvironment(environment)
            logger[metadataKey: MarqueeImageStoreLoggingKeys.location] = "\(parsed)"
            let client: HTTPFetcher
            if let fetcher {
                client = fetcher
            } else {
                do {
                    client = try HTTPFetcher(configuration: HTTPFetcherConfiguration(), logger: logger)
                } catch {
                    throw ImageStoreError(
                        code: .io,
                        reason: "cannot create the HTTP client of the S3 image store: \(error.reason)",
                        underlying: error
                    )
                }
            }
            return S3ImageStore(location: parsed, credentials: credentials, fetcher: client, logger: logger)
        }
        let scheme = location.firstRange(of: "://").map { String(location[..<$0.lowerBound]) } ?? ""
        throw ImageStoreError(
            code: .invalidLocation,
            reason: scheme.isEmpty
                ? "invalid image store location: expected file://… or s3://…"
                : "unsupported image store scheme \(scheme)://: expected file:// or s3://"
        )
    }
}
