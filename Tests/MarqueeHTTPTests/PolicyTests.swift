import Testing

@testable import MarqueeHTTP

@Suite struct URLRedactionTests {
    @Test func redactsSecretParametersAndPasswords() {
        let request = FetchRequest(
            url:
                "https://user:pa55@api.example.org/3/movie?api_key=abc123&language=ko-KR&serviceKey=k%2B1&KEY=x#access_token=t0k"
        )
        #expect(
            request.redactedURL
                == "https://user:REDACTED@api.example.org/3/movie?api_key=REDACTED&language=ko-KR&serviceKey=REDACTED&KEY=REDACTED#access_token=REDACTED"
        )
        #expect(
            FetchRequest(url: "https://openlibrary.org/search.json?q=key").redactedURL
                == "https://openlibrary.org/search.json?q=key"
        )
    }

    @Test func anExplicitRedactedURLWins() {
        var request = FetchRequest(url: "https://example.org/?token=abc")
        #expect(request.redactedURL == "https://example.org/?token=abc", "token is not on the default list")
        let scanned = URLRedaction.redact(request.url, secretParameters: ["token"])  // as the fetcher scans it
        #expect(request.redactedURL(scannedRedaction: scanned) == "https://example.org/?token=REDACTED")
        request.redactedURL = "https://example.org/?token=…"
        #expect(request.redactedURL(scannedRedaction: scanned) == "https://example.org/?token=…")
    }

    @Test func oneScanGivesTheRedactedURLAndTheSecrets() {
        // HTTPFetcher scans a request's URL once for both (make bench-fetch): the same as the two calls.
        let urls = [
            "https://user:pa55@api.example.org/3/movie?api_key=abc123&language=ko-KR&serviceKey=k%2B1&KEY=x#access_token=t0k",
            "http://h/?key=s3cr%2Bt&q=1", "https://example.org/", "not a url ?key=", "https://h/p?api_key=&x=%zz",
        ]
        for url in urls {
            let scanned = URLRedaction.scan(url, secretParameters: URLRedaction.defaultSecretParameters)
            #expect(
                scanned.redacted == URLRedaction.redact(url, secretParameters: URLRedaction.defaultSecretParameters)
            )
            #expect(
                scanned.secrets == URLRedaction.secrets(in: url, secretParameters: URLRedaction.defaultSecretParameters)
            )
        }
        var request = FetchRequest(url: "https://example.org/?token=abc")
        #expect(request.redactedURL(scannedRedaction: "scanned") == "scanned")
        request.redactedURL = "https://example.org/?token=…"
        #expect(
            request.redactedURL(scannedRedaction: "scanned") == "https://example.org/?token=…",
            "an explicit one wins"
        )
    }

    @Test func theByteScanOfAnASCIIURLEqualsTheCharacterwiseScan() {
        // HTTPFetcher reads ASCII URLs on their bytes (make bench-fetch); the verdicts must be the character-wise
        // ones, parts, secrets and all.
        let names = URLRedaction.names(URLRedaction.defaultSecretParameters + ["To%6Ben", "p w"])
        var urls = [
            "https://user:pa55@api.example.org/3/movie?api_key=abc123&language=ko-KR&serviceKey=k%2B1&KEY=x"
                + "#access_token=t0k",
            "http://h/?key=s3cr%2Bt&q=1", "https://example.org/", "not a url ?key=", "https://h/p?api_key=&x=%zz",
            "http://127.0.0.1:8080/tmdb/3/movie/550?api_key=marquee-emulator&language=en-US&append_to_response=a%2Cb",
            "https://u:@h/?key=1", "https://:p@h/", "https://a@b:c@h/x@y?key=1", "https://u:p@h", "://u:p@h?#",
            "?", "#", "?#", "&&", "?&&key&key=&=v&key=a=b", "https://h/?a=1#key=2&key=%41%42&api_key=+a+",
            "https://h/?KeY=%4B&Api%5FKey=v&api%5fkey=w&to%256Ben=z&p+w=q&p%20w=r", "https://h/?key=%E2%82%AC&k=%",
            "https://h/?key=%C3&key=%c3%a9", "http://h/\r\n?key=\r\n&\r\nkey=1", "https://u:p\r\n@h/?key=1#?x",
            "https://h/p?q=caf\u{E9}&key=\u{1F600}", "https://\u{E9}:p@h/?key=1",
        ]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ak=&?#%+:/@ \r\n2Ee5fKy_".unicodeScalars)
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<24, using: &generator)
            let scalars = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            urls.append(String(String.UnicodeScalarView(scalars)))
        }
        for url in urls {
            let bytewise = URLRedaction.scan(url, secretNames: names)
            let characterwise = URLRedaction.characterwiseScan(url, secretNames: names)
            #expect(bytewise.redacted == characterwise.redacted, "\(url.debugDescription)")
            #expect(Array(bytewise.redacted.utf8) == Array(characterwise.redacted.utf8), "\(url.debugDescription)")
            #expect(bytewise.secrets == characterwise.secrets, "\(url.debugDescription)")
        }
    }

    @Test func theByteCheckOfAnASCIIHeaderEqualsTheCharacterwiseCheck() {
        let texts = [
            "", "Accept", "application/json", "a:b", ":", "x\r", "\ny", "a\r\nb", "\u{B}", "\u{C}", "\t", " ", "\u{85}",
            "\u{2028}", "caf\u{E9}", "e\u{301}", "\u{7F}", "KakaoAK 0123",
        ]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("a: \r\n\t\u{B}\u{C}\u{85}\u{E9}".unicodeScalars)
        var pairs = texts.flatMap { name in texts.map { (name, $0) } }
        for _ in 0..<2000 {
            let random = { (length: Int) in
                String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            }
            let lengths = (Int.random(in: 0..<5, using: &generator), Int.random(in: 0..<5, using: &generator))
            pairs.append((random(lengths.0), random(lengths.1)))
        }
        for (name, value) in pairs {
            let header = HTTPHeader(name: name, value: value)
            #expect(
                HTTPFetcher.isValid(header) == HTTPFetcher.isValidCharacterwise(header),
                "\(name.debugDescription) \(value.debugDescription)"
            )
        }
    }

    @Test func scrubsSecretValuesFromText() {
        let secrets = URLRedaction.secrets(in: "http://h/?key=s3cr%2Bt&q=1", secretParameters: ["key"])
        #expect(secrets.contains("s3cr%2Bt") && secrets.contains("s3cr+t"))
        #expect(
            URLRedaction.scrub("failed for s3cr+t and s3cr%2Bt", secrets: secrets) == "failed for REDACTED and REDACTED"
        )
    }
}

@Suite struct HostPolicyTests {
    @Test func allowlistMatchesExactHostsAndProperSubdomains() {
        let allowlist = ["image.tmdb.org", "*.kakaocdn.net"]
        #expect(HostPolicy.matches("image.tmdb.org", allowlist: allowlist))
        #expect(HostPolicy.matches("IMAGE.TMDB.ORG.", allowlist: allowlist))
        #expect(HostPolicy.matches("search1.kakaocdn.net", allowlist: allowlist))
        #expect(!HostPolicy.matches("kakaocdn.net", allowlist: allowlist))
        #expect(!HostPolicy.matches("evilkakaocdn.net", allowlist: allowlist))
        #expect(!HostPolicy.matches("kakaocdn.net.evil.example", allowlist: allowlist))
        #expect(!HostPolicy.matches("tmdb.org", allowlist: allowlist))
        #expect(!HostPolicy.matches("", allowlist: ["*."]))
    }

    @Test func defaultAllowlistCoversTheKakaoThumbnailHostsOfTheFixtures() {
        let configuration = HTTPFetcherConfiguration()
        for host in [
            "search1.kakaocdn.net", "search2.kakaocdn.net", "search3.kakaocdn.net", "search4.kakaocdn.net",
            "t1.daumcdn.net", "image.tmdb.org", "covers.openlibrary.org",
        ] {
            #expect(configuration.isImageHostAllowed(host), "\(host)")
        }
        #expect(!configuration.isImageHostAllowed("blog.naver.com"))
        #expect(!configuration.allowsPrivateAddresses)
    }

    @Test(arguments: [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::", "2001:db8::1",
    ])
    func nonPublicAddresses(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(!address.isPublic)
    }

    @Test(arguments: [
        "93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2002:0808:0808::",
    ])
    func publicAddresses(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.isPublic)
    }

    @Test func addressesPrintInTheirUsualForm() throws {
        #expect(try #require(IPAddress("127.0.0.1")).description == "127.0.0.1")
        #expect(try #require(IPAddress("::ffff:10.0.0.1")).description == "::ffff:10.0.0.1")
        #expect(IPAddress("localhost") == nil)
    }
}

@Suite struct RetryAfterTests {
    @Test func parsesDeltaSecondsAndHTTPDates() {
        let now = 1_445_412_480  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .zero)
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:29:30 GMT", now: now) == .seconds(90))
        #expect(RetryAfter.parse("Wednesday, 21-Oct-15 07:28:10 GMT", now: now) == .seconds(10))
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == .zero, "a past date means now")
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse("-5", now: now) == nil)
        #expect(RetryAfter.parse("", now: now) == nil)
    }

    @Test func responsesExposeRetryAfterAndValidators() {
        let response = FetchResponse(
            status: 429,
            headers: [HTTPHeader(name: "ETag", value: "\"x\""), HTTPHeader(name: "Retry-After", value: "5")],
            body: [],
            effectiveURL: "https://example.org/",
            retryAfter: .seconds(5)
        )
        #expect(response.header("etag") == "\"x\"")
        #expect(response.validators == HTTPValidators(etag: "\"x\""))
        #expect(response.retryAfter == .seconds(5))
        #expect(!response.isNotModified)
    }
}

@Suite struct InMemoryValidatorCacheTests {
    @Test func evictsTheLeastRecentlyUsedKey() {
        let cache = InMemoryValidatorCache(capacity: 2)
        cache.store(HTTPValidators(etag: "a"), for: "A")
        cache.store(HTTPValidators(etag: "b"), for: "B")
        #expect(cache.validators(for: "A")?.etag == "a")  // A is now the most recent
        cache.store(HTTPValidators(etag: "c"), for: "C")  // evicts B
        #expect(cache.validators(for: "B") == nil)
        #expect(cache.validators(for: "A")?.etag == "a")
        #expect(cache.validators(for: "C")?.etag == "c")
        #expect(cache.count == 2)
    }

    @Test func staysBoundedUnderManyAccesses() {
        let cache = InMemoryValidatorCache(capacity: 100)
        for index in 0..<10_000 {
            cache.store(HTTPValidators(etag: "\(index)"), for: "key-\(index % 300)")
            _ = cache.validators(for: "key-\(index % 7)")
        }
        #expect(cache.count == 100)
        #expect(cache.validators(for: "key-\(9_999 % 300)")?.etag == "9999")
    }

    /// Used from many tasks at once (as the fetch stage's jobs use it), through the protocol: every key stored
    /// last is read back, and the bound holds.
    @Test func isSharedByConcurrentTasks() async {
        let cache: any ValidatorCache = InMemoryValidatorCache(capacity: 1000)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        await cache.store(HTTPValidators(etag: "\(task)-\(index)"), for: "key-\(task)-\(index % 100)")
                        _ = await cache.validators(for: "key-\((task + 1) % 8)-\(index % 100)")
                    }
                }
            }
        }
        for task in 0..<8 {
            #expect(await cache.validators(for: "key-\(task)-99")?.etag == "\(task)-499")
        }
        #expect((cache as? InMemoryValidatorCache)?.count == 800)
    }

    @Test func defaultCapacity() async {
        #expect(InMemoryValidatorCache().capacity == 100_000)
    }
}

@Suite struct ConfigurationTests {
    @Test func defaults() {
        let configuration = HTTPFetcherConfiguration()
        #expect(configuration.connectTimeout == .seconds(10))
        #expect(configuration.totalTimeout == .seconds(30))
        #expect(configuration.maxBodyBytes == 20 * 1024 * 1024)
        #expect(configuration.maxRedirects == 5)
        #expect(configuration.prefersHTTP2)
        #expect(configuration.acceptEncoding == "")
        #expect(configuration.secretQueryParameters == ["api_key", "key", "serviceKey", "apikey", "access_token"])
    }

    @Test func invalidValuesAreRejected() {
        var configuration = HTTPFetcherConfiguration()
        configuration.hostLimits = ["x": HostLimit(requestsPerSecond: 0)]
        #expect(throws: HTTPFetchError.self) { try configuration.validate() }
        configuration.hostLimits = [:]
        configuration.maxBodyBytes = 0
        #expect(throws: HTTPFetchError.self) { try configuration.validate() }
    }

    @Test func errorClassesAndDescriptions() {
        let timeout = HTTPFetchError(code: .timeout, reason: "slow", url: "https://h/?key=REDACTED")
        #expect(timeout.isRetriable)
        #expect(timeout.description == "HTTPFetchError.timeout: slow (GET https://h/?key=REDACTED)")
        for code in [
            HTTPFetchError.Code.tooLarge, .hostNotAllowed, .addressNotAllowed, .invalidURL, .tooManyRedirects, .tls,
        ] {
            #expect(!HTTPFetchError(code: code, reason: "").isRetriable, "\(code)")
        }
        for code in [HTTPFetchError.Code.connectFailed, .connectionReset, .transfer] {
            #expect(HTTPFetchError(code: code, reason: "").isRetriable, "\(code)")
        }
        #expect(CurlCode.operationTimedOut.fetchErrorCode == .timeout)
        #expect(CurlCode(rawValue: 60).fetchErrorCode == .tls)  // CURLE_PEER_FAILED_VERIFICATION
    }
}

@Suite struct HeaderLineTests {
    /// ``CurlTransfer/read(_:)`` reads ASCII lines on their bytes: the same as the character-wise reading.
    @Test func readsAsTheCharacterwiseReading() {
        let lines = [
            "HTTP/1.1 200 OK\r\n", "HTTP/2 304\r\n", "HTTP/1.1 abc\r\n", "HTTP/\r\n", "\r\n", "\n", "", "\r\r\n\n",
            "HTTP/1.1  429  Too Many\r\n", "HTTP/1.1 +503\r\n", "HTTP/1.1 -1 x\r\n", "HTTP/1.1\r\n", "HTTP/1.1 \r\n",
            "HTTP/1.0 99999999999999999999 Big\r\n", "HTTP/1.1 200\tOK\r\n", "HTTP/1.1 2 00\r\n",
            "Content-Length: 4318\r\n", "content-length:12", "Content-Type:\t \tapplication/json\r\n",
            "X-Empty:\r\n", "X-Blank:   \r\n", "No colon here\r\n", ":\r\n", "A\r\nB: v\r\n", "ETag: \"a:b\"\r\n",
            "Retry-After: 3\n\r", "X-Ünïcode: é\r\n", "Set: caf\u{e9}\r\n", "Odd: a\u{301}\r\n",
            "MiXeD-CaSe: VaLuE\r\n",
            "Z[\\]^_`@: v\r\n", "  Leading: space\r\n",
        ]
        for line in lines {
            let bytes = Array(line.utf8)
            bytes.withUnsafeBytes { raw in
                #expect(CurlTransfer.read(raw) == CurlTransfer.readCharacterwise(raw), "\(line.debugDescription)")
            }
        }
        [UInt8]([0x58, 0x3A, 0x20, 0xFF, 0x0D, 0x0A]).withUnsafeBytes { raw in
            #expect(CurlTransfer.read(raw) == CurlTransfer.readCharacterwise(raw), "invalid UTF-8")
        }
    }
}
