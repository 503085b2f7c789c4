import Crypto
import Logging
import MarqueeHTTP
import Synchronization
import Testing

/// PUT uploads, HEAD, and AWS SigV4 signing (libcurl's CURLOPT_AWS_SIGV4), checked on the loopback server.
@Suite(.timeLimit(.minutes(2)))
struct UploadAndSigningTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let token = "FQoGZXIvYXdzEXAMPLESESSIONTOKEN"
    static let signing = AWSSigV4(
        provider: "aws:amz:us-east-1:s3",
        accessKeyID: "AKIDEXAMPLE",
        secretAccessKey: secret,
        sessionToken: token
    )

    // MARK: - Methods

    @Test func putUploadsTheExactBytesWithTheirContentLength() async throws {
        try await withFetcher { fetcher, server in
            let bytes: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }
            let request = FetchRequest(
                url: server.baseURL + "/upload",
                headers: [HTTPHeader(name: "Content-Type", value: "image/webp")],
                method: .put,
                body: bytes
            )
            let response = try await fetcher.fetch(request)
            #expect(response.status == 201)
            #expect(String(decoding: response.body, as: UTF8.self) == "stored 300000")
            let snapshot = server.snapshot
            #expect(snapshot.lastMethod["/upload"] == "PUT")
            #expect(snapshot.lastBody["/upload"] == bytes)
            let headers = snapshot.lastHeaders["/upload"] ?? []
            #expect(headers.filter { $0.0 == "content-length" }.map(\.1) == ["300000"])
            #expect(headers.filter { $0.0 == "content-type" }.map(\.1) == ["image/webp"])
            #expect(!headers.contains { $0.0 == "expect" }, "no 100-continue round trip below 1 MiB")

            // No body: an empty upload, labelled as bytes (never as a form).
            let empty = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/upload", method: .put))
            #expect(empty.status == 201)
            let emptyHeaders = server.snapshot.lastHeaders["/upload"] ?? []
            #expect(emptyHeaders.filter { $0.0 == "content-length" }.map(\.1) == ["0"])
            #expect(emptyHeaders.filter { $0.0 == "content-type" }.map(\.1) == ["application/octet-stream"])
            #expect(server.snapshot.lastBody["/upload"] == [])
        }
    }

    @Test func deleteSendsTheMethod() async throws {
        try await withFetcher { fetcher, server in
            let response = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/upload", method: .delete))
            #expect(response.status == 201)
            #expect(server.snapshot.lastMethod["/upload"] == "DELETE")
        }
    }

    @Test func headReturnsTheStatusWithoutWaitingForABody() async throws {
        try await withFetcher { fetcher, server in
            var request = FetchRequest(url: server.baseURL + "/bytes?n=5000", method: .head)
            request.maxBodyBytes = 100  // the Content-Length of a HEAD describes the resource, not this response
            let response = try await fetcher.fetch(request)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.header("content-length") == "5000")
            #expect(response.totalTime < .seconds(2), "no wait for a body that never comes")
            #expect(server.snapshot.lastMethod["/bytes"] == "HEAD")

            let missing = try await fetcher.fetch(FetchRequest(url: server.baseURL + "/nothing", method: .head))
            #expect(missing.status == 404)
            #expect(missing.body.isEmpty)
            // The connection stays usable after a HEAD.
            #expect(try await fetcher.fetch(FetchRequest(url: server.baseURL + "/bytes?n=10")).body.count == 10)
        }
    }

    @Test func aBodyOnlyGoesWithPut() async throws {
        try await withFetcher { fetcher, server in
            let request = FetchRequest(url: server.baseURL + "/upload", method: .get, body: [1, 2, 3])
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(request) }
            )
            #expect(error.code == .invalidRequest)
            #expect(server.snapshot.totalRequests == 0)
        }
    }

    // MARK: - AWS SigV4

    @Test func signsWithAWSSigV4AndTheSecretAppearsNowhere() async throws {
        let store = CapturingLogHandler.Lines()
        let logger = Logger(label: "capture") { _ in CapturingLogHandler(store: store) }
        try await withFetcher(logger: logger) { fetcher, server in
            let body: [UInt8] = Array("poster bytes".utf8)
            let payloadHash = Self.hex(SHA256.hash(data: body))
            let request = FetchRequest(
                url: server.baseURL + "/upload",
                headers: [
                    HTTPHeader(name: "Content-Type", value: "image/jpeg"),
                    HTTPHeader(name: "x-amz-content-sha256", value: payloadHash),
                ],
                method: .put,
                body: body,
                awsSigV4: Self.signing
            )
            let response = try await fetcher.fetch(request)
            #expect(response.status == 201)
            let headers = server.snapshot.lastHeaders["/upload"] ?? []
            let authorization = try #require(headers.first { $0.0 == "authorization" }?.1)
            let match = try #require(
                authorization.wholeMatch(
                    of:
                        /AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/us-east-1\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})/
                ),
                "\(authorization)"
            )
            let signedHeaders = String(match.output.2).split(separator: ";").map(String.init)
            for name in ["content-type", "host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"] {
                #expect(signedHeaders.contains(name), "\(name) is signed: \(signedHeaders)")
            }
            #expect(headers.first { $0.0 == "x-amz-security-token" }?.1 == Self.token)
            #expect(headers.contains { $0.0 == "x-amz-date" })

            // The signature is the one AWS would compute (canonical request → string to sign → HMAC chain).
            let expected = Self.signature(
                method: "PUT",
                path: "/upload",
                headers: headers,
                signedHeaders: signedHeaders,
                payloadHash: payloadHash,
                day: String(match.output.1)
            )
            #expect(String(match.output.3) == expected)

            // The secret never leaves: not on the wire, not in descriptions.
            #expect(headers.allSatisfy { !$0.1.contains(Self.secret) })
            for text in [
                "\(request)", String(reflecting: request), "\(Self.signing)", String(reflecting: Self.signing),
            ] {
                #expect(!text.contains(Self.secret) && !text.contains(Self.token), "\(text)")
            }

            // Nor into errors.
            let port = try closedPort()
            var failing = request
            failing.url = "http://127.0.0.1:\(port)/bucket/key"
            let error = try #require(
                await expectFetchError { () async throws(HTTPFetchError) in try await fetcher.fetch(failing) }
            )
            #expect(error.code == .connectFailed)
            #expect(!error.description.contains(Self.secret) && !String(reflecting: error).contains(Self.secret))
        }
        let lines = store.lines.withLock { $0 }
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { !$0.contains(Self.secret) && !$0.contains(Self.token) }, "\(lines)")
    }

    @Test func signedGetAndHeadHashAnEmptyPayload() async throws {
        try await withFetcher { fetcher, server in
            for method in [FetchRequest.Method.get, .head] {
                let response = try await fetcher.fetch(
                    FetchRequest(url: server.baseURL + "/bytes?n=3", method: method, awsSigV4: Self.signing)
                )
                #expect(response.status == 200)
                let headers = server.snapshot.lastHeaders["/bytes"] ?? []
                let authorization = try #require(headers.first { $0.0 == "authorization" }?.1)
                let match = try #require(
                    authorization.wholeMatch(
                        of:
                            /AWS4-HMAC-SHA256 Credential=[^\/]+\/(\d{8})\/[^,]+, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})/
                    )
                )
                let expected = Self.signature(
                    method: method.rawValue,
                    path: "/bytes",
                    query: "n=3",
                    headers: headers,
                    signedHeaders: String(match.output.2).split(separator: ";").map(String.init),
                    payloadHash: Self.hex(SHA256.hash(data: [UInt8]())),
                    day: String(match.output.1)
                )
                #expect(String(match.output.3) == expected, "\(method)")
            }
        }
    }

    @Test func signedRequestsDoNotFollowRedirects() async throws {
        try await withFetcher { fetcher, server in
            let response = try await fetcher.fetch(
                FetchRequest(url: server.baseURL + "/redirect?n=2", awsSigV4: Self.signing)
            )
            #expect(response.status == 302)
            #expect(response.redirectCount == 0)
            #expect(server.snapshot.requests["/redirect"] == 1)
            // An unsigned PUT does not follow either (its body would have to be sent again).
            let put = try await fetcher.fetch(
                FetchRequest(url: server.baseURL + "/redirect?n=1", method: .put, body: [1])
            )
            #expect(put.status == 302)
        }
    }

    // MARK: - Reference signer

    /// AWS Signature Version 4 computed from what the server received.
    static func signature(
        method: String,
        path: String,
        query: String = "",
        headers: [(String, String)],
        signedHeaders: [String],
        payloadHash: String,
        day: String
    ) -> String {
        let canonicalHeaders = signedHeaders.map { name in
            "\(name):\(headers.first { $0.0 == name }?.1.trimmingSpaces ?? "")\n"
        }.joined()
        let canonicalRequest = [
            method, path, query, canonicalHeaders, signedHeaders.joined(separator: ";"), payloadHash,
        ]
        .joined(separator: "\n")
        let amzDate = headers.first { $0.0 == "x-amz-date" }?.1 ?? ""
        let scope = "\(day)/us-east-1/s3/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Array(canonicalRequest.utf8))),
        ].joined(separator: "\n")
        var key = SymmetricKey(data: Array("AWS4\(Self.secret)".utf8))
        for part in [day, "us-east-1", "s3", "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
