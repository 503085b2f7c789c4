internal import CMarqueeCurl
internal import Ccurl
import Synchronization

import class Foundation.Thread

#if canImport(Glibc)
import Glibc
#endif

/// Downloads one URL straight into a file, a piece at a time, so a large body (TMDB's daily id export) is never
/// whole in memory.
///
/// One libcurl easy handle on a thread of its own (`curl_easy_perform` blocks); the caller awaits the outcome.
/// Redirects are followed (up to 5, http and https only). The body is written only for a 200; any other status
/// is returned with nothing written, so the caller can tell a missing file (404) from a failure.
public enum HTTPFileDownload {
    /// How a download ended with an HTTP answer.
    public struct Outcome: Sendable, Hashable {
        /// The final HTTP status.
        public var status: Int
        /// Bytes written to the file (0 unless ``status`` is 200).
        public var bytes: Int64
    }

    /// Downloads `url` into `path` (created or truncated).
    ///
    /// - Parameters:
    ///   - url: An http or https URL (no secret in it: it appears in errors).
    ///   - path: The file to write.
    ///   - userAgent: The `User-Agent` header.
    ///   - connectTimeout: How long connecting may take.
    ///   - progress: Called on the download's thread with the bytes received so far and the `Content-Length`
    ///     (or `nil`), at most about ten times a second.
    /// - Returns: The status and the bytes written.
    /// - Throws: An ``HTTPFetchError`` when no HTTP answer arrived, the transfer broke, the file could not be
    ///   written, or the calling task was cancelled.
    public static func download(
        _ url: String,
        to path: String,
        userAgent: String,
        connectTimeout: Duration = .seconds(10),
        progress: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in }
    ) async throws(HTTPFetchError) -> Outcome {
        HTTPFetcher.globalInit()
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            throw HTTPFetchError(code: .other, reason: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let context = DownloadContext(file: file, progress: progress)
        let result: Result<Outcome, HTTPFetchError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    continuation.resume(
                        returning: Self.perform(url, context: context, userAgent: userAgent, timeout: connectTimeout)
                    )
                }
                thread.name = "marquee-http-download"
                thread.start()
            }
        } onCancel: {
            context.isCancelled.store(true, ordering: .relaxed)
        }
        close(file)
        return try result.get()
    }

    /// Runs the transfer on the calling (dedicated) thread.
    private static func perform(
        _ url: String,
        context: DownloadContext,
        userAgent: String,
        timeout: Duration
    ) -> Result<Outcome, HTTPFetchError> {
        let easy: CurlEasyHandle
        do throws(HTTPFetchError) {
            easy = try CurlEasyHandle()
            easy.reset()
            context.easy = easy.raw
            try easy.set(CURLOPT_URL, url)
            try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            try easy.set(CURLOPT_FOLLOWLOCATION, true)
            try easy.set(CURLOPT_MAXREDIRS, 5)
            try easy.set(CURLOPT_NOSIGNAL, true)
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(timeout.components.seconds * 1000))
            // A stalled download (under 1 KB/s for a minute) is given up rather than waited on for ever.
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, 1024)
            try easy.set(CURLOPT_LOW_SPEED_TIME, 60)
            try easy.set(CURLOPT_USERAGENT, userAgent)
            try easy.set(CURLOPT_ACCEPT_ENCODING, "identity")
            try easy.set(CURLOPT_WRITEFUNCTION, writeCallback: downloadWriteCallback)
            try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(context).toOpaque())
            try easy.set(CURLOPT_NOPROGRESS, false)
            let code = CMarqueeCurl_easy_setopt_xferinfo_callback(
                easy.raw,
                CURLOPT_XFERINFOFUNCTION,
                downloadProgressCallback
            )
            guard code == CURLE_OK else {
                return .failure(HTTPFetchError(code: .other, reason: "cannot set the progress callback"))
            }
            try easy.set(CURLOPT_XFERINFODATA, pointer: Unmanaged.passUnretained(context).toOpaque())
        } catch {
            return .failure(error)
        }
        // Blocks this thread until the transfer ends; the callbacks run here too.
        let code = CurlCode(curl_easy_perform(easy.raw))
        if context.isCancelled.load(ordering: .relaxed) { return .failure(.cancelled(url: url)) }
        if let writeError = context.writeError {
            return .failure(HTTPFetchError(code: .other, reason: "cannot write the download: \(writeError)", url: url))
        }
        guard code == .ok else {
            return .failure(
                HTTPFetchError(
                    code: code.fetchErrorCode,
                    reason: easy.errorText ?? code.message,
                    url: url,
                    curlCode: code
                )
            )
        }
        return .success(Outcome(status: easy.info(long: CURLINFO_RESPONSE_CODE), bytes: context.written))
    }
}

/// What the callbacks of one download share. Touched only by the download's thread, except ``isCancelled``
/// (atomic), set by the awaiting task's cancellation handler: hence `@unchecked Sendable`.
private final class DownloadContext: @unchecked Sendable {
    let file: Int32
    let progress: @Sendable (Int64, Int64?) -> Void
    let isCancelled = Atomic<Bool>(false)
    var easy: UnsafeMutableRawPointer?
    var written: Int64 = 0
    var writeError: String?
    var lastReport: ContinuousClock.Instant?

    init(file: Int32, progress: @escaping @Sendable (Int64, Int64?) -> Void) {
        self.file = file
        self.progress = progress
    }

    /// Writes a piece of a 200's body; any other status's body is dropped. `false` stops the transfer.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !self.isCancelled.load(ordering: .relaxed) else { return false }
        var status = 0
        if let easy = self.easy { _ = CMarqueeCurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) }
        guard status == 200 else { return true }
        var offset = 0
        while offset < bytes.count {
            let count = write(self.file, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                self.writeError = String(cString: strerror(errno))
                return false
            }
            offset += count
        }
        self.written += Int64(bytes.count)
        return true
    }
}

private func downloadWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    let download = Unmanaged<DownloadContext>.fromOpaque(context!).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    return download.receive(bytes) ? size * count : 0
}

private func downloadProgressCallback(
    _ context: UnsafeMutableRawPointer?,
    _ totalDownload: curl_off_t,
    _ downloaded: curl_off_t,
    _ totalUpload: curl_off_t,
    _ uploaded: curl_off_t
) -> Int32 {
    let download = Unmanaged<DownloadContext>.fromOpaque(context!).takeUnretainedValue()
    if download.isCancelled.load(ordering: .relaxed) { return 1 }  // non-zero aborts the transfer
    let now = ContinuousClock.now
    if download.written > 0, download.lastReport.map({ now - $0 >= .milliseconds(100) }) ?? true {
        download.lastReport = now
        download.progress(download.written, totalDownload > 0 ? Int64(totalDownload) : nil)
    }
    return 0
}
