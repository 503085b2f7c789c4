internal import CMarqueeCurl
internal import Ccurl

/// Owns one libcurl easy handle (`CURL *`) and its error buffer.
///
/// Used only on the fetcher's loop thread; reused across transfers (``reset()`` clears the options but keeps the
/// handle's caches). Not `Sendable`.
final class CurlEasyHandle {
    /// The `CURL *`.
    let raw: UnsafeMutableRawPointer
    /// The `CURLOPT_ERRORBUFFER` (CURL_ERROR_SIZE bytes), owned here so it outlives every transfer.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init() throws(HTTPFetchError) {
        guard let raw = curl_easy_init() else {
            throw HTTPFetchError(code: .other, reason: "curl_easy_init failed (out of memory?)")
        }
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(self.raw)
        self.errorBuffer.deallocate()
    }

    /// Clears every option (connections and caches stay with the multi handle) and installs the error buffer.
    func reset() {
        curl_easy_reset(self.raw)
        self.errorBuffer[0] = 0
        // A pointer option that cannot fail for a valid handle.
        _ = CMarqueeCurl_easy_setopt_ptr(self.raw, CURLOPT_ERRORBUFFER, self.errorBuffer)
    }

    /// The text libcurl left in the error buffer, if any.
    var errorText: String? {
        self.errorBuffer[Int(CURL_ERROR_SIZE) - 1] = 0
        let text = String(cString: self.errorBuffer)
        return text.isEmpty ? nil : text
    }

    // MARK: - Options

    func set(_ option: CURLoption, _ value: Int) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_long(self.raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(HTTPFetchError) {
        try self.set(option, value ? 1 : 0)
    }

    /// Sets a string option; libcurl copies the string.
    func set(_ option: CURLoption, _ value: String) throws(HTTPFetchError) {
        let code = value.withCString {
            CMarqueeCurl_easy_setopt_ptr(self.raw, option, UnsafeMutableRawPointer(mutating: $0))
        }
        try self.check(code, option)
    }

    /// Sets a `curl_off_t` option (e.g. `CURLOPT_POSTFIELDSIZE_LARGE`).
    func set(_ option: CURLoption, offset value: Int64) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_off_t(self.raw, option, curl_off_t(value)), option)
    }

    /// Sets the upload body: `CURLOPT_POSTFIELDSIZE_LARGE`, then `CURLOPT_COPYPOSTFIELDS` (libcurl copies the bytes,
    /// so the array need not outlive the call). An empty body points at a static empty string instead (a NULL
    /// would make libcurl read the body from a read callback).
    func setUploadBody(_ body: [UInt8]) throws(HTTPFetchError) {
        try self.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
        if body.isEmpty {
            let empty: StaticString = ""
            try self.set(CURLOPT_POSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: empty.utf8Start))
            return
        }
        let code = body.withUnsafeBytes { bytes in
            CMarqueeCurl_easy_setopt_ptr(
                self.raw,
                CURLOPT_COPYPOSTFIELDS,
                UnsafeMutableRawPointer(mutating: bytes.baseAddress)
            )
        }
        try self.check(code, CURLOPT_COPYPOSTFIELDS)
    }

    /// Sets a pointer option; the pointee must outlive the transfer (libcurl does not copy it).
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_ptr(self.raw, option, pointer), option)
    }

    func set(_ option: CURLoption, writeCallback: curl_write_callback) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_write_callback(self.raw, option, writeCallback), option)
    }

    func set(_ option: CURLoption, openSocketCallback: curl_opensocket_callback) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_opensocket_callback(self.raw, option, openSocketCallback), option)
    }

    func set(_ option: CURLoption, prereqCallback: curl_prereq_callback) throws(HTTPFetchError) {
        try self.check(CMarqueeCurl_easy_setopt_prereq_callback(self.raw, option, prereqCallback), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPFetchError) {
        guard code != CURLE_OK else { return }
        let curlCode = CurlCode(code)
        throw HTTPFetchError(
            code: code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT ? .invalidURL : .other,
            reason: "curl_easy_setopt(\(option.rawValue)) failed: \(curlCode.message)",
            curlCode: curlCode
        )
    }

    // MARK: - Info

    func info(long info: CURLINFO) -> Int {
        var value = 0
        guard CMarqueeCurl_easy_getinfo_long(self.raw, info, &value) == CURLE_OK else { return 0 }
        return value
    }

    func info(offset info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        guard CMarqueeCurl_easy_getinfo_off_t(self.raw, info, &value) == CURLE_OK else { return 0 }
        return Int64(value)
    }

    /// A string info, copied (libcurl's pointer is valid only until the handle's next use).
    func info(string info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard CMarqueeCurl_easy_getinfo_string(self.raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}
