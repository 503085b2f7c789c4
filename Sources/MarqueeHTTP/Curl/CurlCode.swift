internal import CMarqueeCurl
internal import Ccurl

/// A libcurl easy result code (`CURLcode`), with named constants for the codes Marquee sorts.
public struct CurlCode: Hashable, Sendable, CustomStringConvertible {
    /// The raw `CURLcode` value.
    public let rawValue: Int32

    /// Wraps a raw `CURLcode` value.
    ///
    /// - Parameter rawValue: The raw value.
    public init(rawValue: Int32) { self.rawValue = rawValue }
    init(_ code: CURLcode) { self.rawValue = Int32(bitPattern: code.rawValue) }

    /// `CURLE_OK`.
    public static let ok = CurlCode(CURLE_OK)
    /// `CURLE_OPERATION_TIMEDOUT`: connect, total or low-speed timeout.
    public static let operationTimedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    /// `CURLE_COULDNT_CONNECT`.
    public static let couldNotConnect = CurlCode(CURLE_COULDNT_CONNECT)
    /// `CURLE_COULDNT_RESOLVE_HOST`.
    public static let couldNotResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    /// `CURLE_WRITE_ERROR`: the write callback refused data (the body cap).
    public static let writeError = CurlCode(CURLE_WRITE_ERROR)
    /// `CURLE_ABORTED_BY_CALLBACK`: a callback aborted the transfer (the address policy).
    public static let abortedByCallback = CurlCode(CURLE_ABORTED_BY_CALLBACK)

    /// libcurl's text for the code (`curl_easy_strerror`).
    public var message: String { String(cString: curl_easy_strerror(CURLcode(UInt32(bitPattern: self.rawValue)))) }

    public var description: String { "curl \(self.rawValue): \(self.message)" }

    /// The ``HTTPFetchError/Code`` this result sorts into.
    var fetchErrorCode: HTTPFetchError.Code {
        switch CURLcode(UInt32(bitPattern: self.rawValue)) {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .connectFailed
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            return .connectionReset
        case CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR, CURLE_WEIRD_SERVER_REPLY,
            CURLE_BAD_CONTENT_ENCODING, CURLE_READ_ERROR:
            return .transfer
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge
        case CURLE_TOO_MANY_REDIRECTS:
            return .tooManyRedirects
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return .tls
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .invalidURL
        default:
            return .other
        }
    }
}

/// libcurl's multi result code (`CURLMcode`); any value but `CURLM_OK` is a programming or resource error.
struct CurlMultiCode: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32

    init(_ code: CURLMcode) { self.rawValue = code.rawValue }

    var isOK: Bool { self.rawValue == CURLM_OK.rawValue }

    var description: String {
        "curl multi \(self.rawValue): \(String(cString: curl_multi_strerror(CURLMcode(self.rawValue))))"
    }
}
