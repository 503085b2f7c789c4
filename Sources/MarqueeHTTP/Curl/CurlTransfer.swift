internal import CMarqueeCurl
internal import Ccurl
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One hop of a fetch, as handed to the loop thread.
struct TransferJob: Sendable {
    /// The URL of this hop (not redacted: it goes to libcurl only).
    var url: String
    /// `Name: value` request header lines.
    var headerLines: [String]
    /// The time left for this hop (the fetch's total timeout minus earlier hops).
    var timeout: Duration
    /// The body cap.
    var maxBodyBytes: Int
    /// Whether the address policy applies (image requests unless private addresses are allowed).
    var restrictsAddresses: Bool
    /// The HTTP method.
    var method: FetchRequest.Method = .get
    /// The upload of a `PUT`.
    var body: [UInt8]? = nil
    /// Signing credentials (libcurl computes the signature).
    var awsSigV4: AWSSigV4? = nil
}

/// The response of one hop.
struct TransferOutcome: Sendable {
    var status: Int
    var headers: [HTTPHeader]
    var body: [UInt8]
    /// The absolute `Location` target when the status is a redirect.
    var redirectURL: String?
    var effectiveURL: String
    var httpVersion: String
    var totalTime: Duration
    var downloadedBytes: Int
    var newConnections: Int
    /// When the loop thread saw the transfer complete.
    var completedAt: ContinuousClock.Instant
}

typealias TransferContinuation = CheckedContinuation<Result<TransferOutcome, HTTPFetchError>, Never>

/// The handle of a submitted hop that the submitting task keeps, to cancel it.
final class TransferTicket: Sendable {
    private let cancelled = Atomic<Bool>(false)

    var isCancelled: Bool { self.cancelled.load(ordering: .acquiring) }

    func cancel() { self.cancelled.store(true, ordering: .releasing) }
}

/// The loop thread's record of a transfer in its multi handle: what the callbacks accumulate.
///
/// Only the loop thread touches it (libcurl runs the callbacks inside `curl_multi_perform`), through an
/// `Unmanaged` pointer that stays valid because ``CurlMultiHandle`` holds the transfer until it is removed from
/// the multi handle.
final class CurlTransfer {
    let ticket: TransferTicket
    let continuation: TransferContinuation
    let easy: CurlEasyHandle
    let maxBodyBytes: Int
    /// The `struct curl_slist *` of the request headers; libcurl does not copy it.
    var headerList: UnsafeMutablePointer<curl_slist>?

    var status = 0
    var headers: [HTTPHeader] = []
    var body: [UInt8] = []
    /// Why the body was refused, when it was too large.
    var tooLargeReason: String?
    /// The non-public address the policy refused, if it did.
    var refusedAddress: String?
    /// A `HEAD` request: no body follows, and `Content-Length` is not held to the cap.
    var isHead = false

    init(ticket: TransferTicket, continuation: TransferContinuation, easy: CurlEasyHandle, maxBodyBytes: Int) {
        self.ticket = ticket
        self.continuation = continuation
        self.easy = easy
        self.maxBodyBytes = maxBodyBytes
    }

    deinit { self.freeHeaderList() }

    func freeHeaderList() {
        curl_slist_free_all(self.headerList)
        self.headerList = nil
    }

    /// Whether the current response is a redirect whose body is dropped.
    private var isRedirect: Bool { [301, 302, 303, 307, 308].contains(self.status) }

    /// Takes a body chunk; returns the bytes consumed (less than `chunk.count` aborts the transfer).
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if self.isRedirect { return chunk.count }
        guard self.body.count + chunk.count <= self.maxBodyBytes else {
            self.tooLargeReason = "the body exceeded the \(self.maxBodyBytes)-byte cap while downloading"
            return 0
        }
        self.body.append(contentsOf: chunk)
        return chunk.count
    }

    /// What one header line says.
    enum HeaderLine: Equatable {
        /// A status line (`HTTP/…`): a new response begins, with this status (0 when unreadable).
        case status(Int)
        /// A header field: the name lowercased, the value without leading blanks.
        case field(name: String, value: String)
        /// Anything else (the blank line ending the headers, a line without a colon).
        case other
    }

    /// Reads a header line. An ASCII line (nearly every one) is read on its bytes, where each byte is a
    /// character; the trailing CR/LF run, the colon, the lowercasing and the leading blanks come out the same as
    /// ``readCharacterwise(_:)`` (the reading before, which libcurl's headers made several percent of a fetch's
    /// CPU; make bench-fetch), which takes every other line.
    static func read(_ line: UnsafeRawBufferPointer) -> HeaderLine {
        guard line.allSatisfy({ $0 < 0x80 }) else { return self.readCharacterwise(line) }
        var end = line.count
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x0A { end -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: line[..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            // "HTTP/1.1 200 OK": the second space-separated word, as a number (0 when there is none).
            var index = 0
            while index < bytes.count, bytes[index] != 0x20 { index += 1 }
            while index < bytes.count, bytes[index] == 0x20 { index += 1 }
            let start = index
            while index < bytes.count, bytes[index] != 0x20 { index += 1 }
            guard index > start else { return .status(0) }
            return .status(
                Int(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) ?? 0
            )
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .other }
        var valueStart = colon + 1
        while valueStart < bytes.count, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
        let name = String(unsafeUninitializedCapacity: colon) { buffer in
            for index in 0..<colon {
                let byte = bytes[index]
                buffer[index] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte  // A-Z lowercased
            }
            return colon
        }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[valueStart...]), as: UTF8.self)
        return .field(name: name, value: value)
    }

    /// ``read(_:)`` character by character.
    static func readCharacterwise(_ line: UnsafeRawBufferPointer) -> HeaderLine {
        var text = String(decoding: line, as: UTF8.self)
        while let last = text.last, last == "\r\n" || last == "\n" || last == "\r" { text.removeLast() }
        if text.hasPrefix("HTTP/") {
            let parts = text.split(separator: " ", maxSplits: 2)
            return .status(parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
        }
        guard let colon = text.firstIndex(of: ":") else { return .other }
        let name = text[..<colon].lowercased()
        let value = text[text.index(after: colon)...].trimmingPrefix(while: { $0 == " " || $0 == "\t" })
        return .field(name: name, value: String(value))
    }

    /// Takes one header line (status line included); returns `false` to abort the transfer.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        let name: String
        let value: String
        switch Self.read(line) {
        case .status(let status):
            // A new response (an interim 1xx, or the final one): start over.
            self.headers = []
            self.status = status
            return true
        case .other:
            return true
        case .field(let fieldName, let fieldValue):
            name = fieldName
            value = fieldValue
        }
        self.headers.append(HTTPHeader(name: name, value: value))
        if name == "content-length", let length = Int(value), self.announcesBody {
            if length > self.maxBodyBytes {
                self.tooLargeReason = "Content-Length \(length) exceeds the \(self.maxBodyBytes)-byte cap"
                return false
            }
            self.body.reserveCapacity(length)
        }
        return true
    }

    /// Whether the current status has a body that is kept (so its `Content-Length` counts against the cap).
    private var announcesBody: Bool {
        !self.isHead && !(100..<200).contains(self.status) && self.status != 204 && self.status != 304
            && !self.isRedirect
    }

    /// Checks an address libcurl is about to connect to (or has connected to) against the policy.
    func admits(_ address: IPAddress?) -> Bool {
        guard let address else {
            self.refusedAddress = "an unrecognised address"
            return false
        }
        guard address.isPublic else {
            self.refusedAddress = address.description
            return false
        }
        return true
    }
}

// MARK: - C callbacks
//
// Each receives the `CurlTransfer` as its user data (an unretained `Unmanaged` pointer, see `CurlTransfer`).

func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
    let accepted = transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
    return accepted ? size * count : 0
}

/// CURLOPT_OPENSOCKETFUNCTION: refuses a non-public address before any packet is sent to it.
func curlOpenSocketCallback(
    _ context: UnsafeMutableRawPointer?,
    _ purpose: curlsocktype,
    _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> curl_socket_t {
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
    guard let address else { return CURL_SOCKET_BAD }
    let family = address.pointee.family
    // `addr` is declared as a `struct sockaddr`, but libcurl stores a whole sockaddr_in6 there for IPv6.
    let sockaddrPointer = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \.addr)!
    guard transfer.admits(IPAddress(sockaddr: sockaddrPointer, family: family)) else { return CURL_SOCKET_BAD }
    return socket(family, address.pointee.socktype, address.pointee.protocol)
}

/// CURLOPT_PREREQFUNCTION: the same check for a connection libcurl reuses (opened by a request without the policy).
func curlPrereqCallback(
    _ context: UnsafeMutableRawPointer?,
    _ primaryIP: UnsafeMutablePointer<CChar>?,
    _ localIP: UnsafeMutablePointer<CChar>?,
    _ primaryPort: Int32,
    _ localPort: Int32
) -> Int32 {
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
    let address = primaryIP.flatMap { IPAddress(String(cString: $0)) }
    return transfer.admits(address) ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}
