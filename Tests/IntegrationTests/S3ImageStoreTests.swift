import Logging
import MarqueeHTTP
import MarqueeImageStore
import MarqueeTestSupport
import Testing

/// The S3 image store against a real local S3: moto's server, started per test, with signature checking on.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TestEnvironment.isIntegrationEnabled))
struct S3ImageStoreTests {
    static let bucket = "marquee-images"
    static let poster: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }

    struct Context {
        let moto: MotoServerProcess
        let fetcher: HTTPFetcher
        let environment: [String: String]
        var location: String {
            "s3://\(S3ImageStoreTests.bucket)/posters?endpoint=\(self.moto.endpoint)&region=us-east-1"
        }

        func store(location: String? = nil, environment: [String: String]? = nil) throws -> any ImageStore {
            try ImageStores.make(
                location: location ?? self.location,
                environment: environment ?? self.environment,
                fetcher: self.fetcher,
                logger: .marqueeTest
            )
        }

        /// Responses the fetcher received so far (one per request: no store request is redirected).
        var requests: Int { self.fetcher.statistics.responsesByStatus.values.reduce(0, +) }
    }

    /// Starts moto with an IAM user allowed `s3:*`, turns signature checking on, creates the bucket.
    func withS3<T>(_ body: (Context) async throws -> T) async throws -> T {
        let moto = try await MotoServerProcess.start()
        let fetcher = try HTTPFetcher(configuration: HTTPFetcherConfiguration(), logger: .marqueeTest)
        do {
            let keys = try await moto.createUser("marquee-images")
            try await moto.enableAuthentication()
            let context = Context(
                moto: moto,
                fetcher: fetcher,
                environment: ["AWS_ACCESS_KEY_ID": keys.accessKeyID, "AWS_SECRET_ACCESS_KEY": keys.secretAccessKey]
            )
            let store = try #require(try context.store() as? S3ImageStore)
            try await store.createBucket()  // a signed PUT /<bucket>
            try await store.createBucket()  // again: already ours is fine
            let result = try await body(context)
            await fetcher.shutdown()
            moto.terminate()
            return result
        } catch {
            await fetcher.shutdown()
            moto.terminate()
            throw error
        }
    }

    @Test func putExistsGetAndDedup() async throws {
        try await withS3 { s3 in
            let store = try s3.store()
            #expect(store.location == "s3://\(Self.bucket)/posters?region=us-east-1&endpoint=\(s3.moto.endpoint)")
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(Self.poster))
            #expect(store.url(for: key) == "\(s3.moto.endpoint)/\(Self.bucket)/posters/\(key)")
            #expect(try await store.exists(key) == false)
            #expect(try await store.get(key) == nil)

            try await store.put(key, Self.poster, contentType: "image/jpeg")
            #expect(try await store.exists(key))
            #expect(try await store.get(key) == Self.poster)

            // Stored with its metadata (a signed HEAD, straight through the fetcher).
            let credentials = try S3Credentials.fromEnvironment(s3.environment)
            let head = try await s3.fetcher.fetch(
                FetchRequest(
                    url: store.url(for: key),
                    headers: [HTTPHeader(name: "x-amz-content-sha256", value: ContentHash.sha256Hex([]))],
                    method: .head,
                    awsSigV4: AWSSigV4(
                        provider: "aws:amz:us-east-1:s3",
                        accessKeyID: credentials.accessKeyID,
                        secretAccessKey: credentials.secretAccessKey
                    )
                )
            )
            #expect(head.status == 200)
            #expect(head.header("content-type") == "image/jpeg")
            #expect(head.header("content-length") == "\(Self.poster.count)")

            // Dedup: a second put of the key is one HEAD, nothing uploaded.
            let before = s3.requests
            try await store.put(key, Self.poster, contentType: "image/jpeg")
            #expect(s3.requests == before + 1, "exists first, no PUT")

            // Over 1 MiB libcurl adds `Expect: 100-continue` (unsigned); the signature still holds.
            let large: [UInt8] = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ ($0 >> 12)) }
            let largeKey = ImageKey.original(sha256: ContentHash.sha256Hex(large))
            try await store.put(largeKey, large, contentType: "image/png")
            #expect(try await store.get(largeKey) == large)

            // Delete (the collection of replaced images): gone, and a second delete is no error.
            try await store.delete(largeKey)
            #expect(try await store.exists(largeKey) == false)
            try await store.delete(largeKey)
            #expect(try await store.exists(key), "another key stays")

            // Variants beside the original; an empty object is fine.
            let variant = ImageKey.variant(sha256: key.sha256, width: 342, format: "webp")
            try await store.put(variant, [0x52, 0x49, 0x46, 0x46], contentType: "image/webp")
            #expect(try await store.get(variant) == [0x52, 0x49, 0x46, 0x46])
            let empty = ImageKey.variant(sha256: key.sha256, width: 92, format: "webp")
            try await store.put(empty, [], contentType: "image/webp")
            #expect(try await store.get(empty) == [])

            // Many workers storing one new image at once end with it stored intact. moto (unlike S3) can fail
            // simultaneous PUTs of one key with a 500 ("I/O operation on closed file" in its in-memory backend):
            // that is `unavailable`, so a worker retries, as the pipeline's retry tier would.
            let bytes: [UInt8] = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
            let shared = ImageKey.original(sha256: ContentHash.sha256Hex(bytes))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        for attempt in 1...5 {
                            do throws(ImageStoreError) {
                                try await store.put(shared, bytes, contentType: "image/png")
                                return
                            } catch {
                                #expect(error.isRetriable, "\(error)")
                                if attempt == 5 { throw error }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await store.get(shared) == bytes)

            // The endpoint goes away: unavailable, retriable.
            s3.moto.terminate()
            do throws(ImageStoreError) {
                _ = try await store.exists(key)
                Issue.record("exists succeeded with the endpoint down")
            } catch {
                #expect(error.code == .unavailable, "\(error)")
                #expect(error.isRetriable)
                #expect(error.key == key)
            }
        }
    }

    @Test func wrongCredentialsAreDenied() async throws {
        try await withS3 { s3 in
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(Self.poster))
            try await s3.store().put(key, Self.poster, contentType: "image/jpeg")
            let accessKeyID = s3.environment["AWS_ACCESS_KEY_ID"]!
            let wrongSecret = "WRONGSECRETwrongsecretWRONGSECRETwrongsec"
            let cases: [(String, [String: String])] = [
                ("wrong secret", ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": wrongSecret]),
                ("unknown key", ["AWS_ACCESS_KEY_ID": "AKIAUNKNOWNKEY000000", "AWS_SECRET_ACCESS_KEY": wrongSecret]),
            ]
            for (name, environment) in cases {
                let store = try s3.store(environment: environment)
                for operation in ["exists", "get", "put", "delete"] {
                    do throws(ImageStoreError) {
                        switch operation {
                        case "exists": _ = try await store.exists(key)
                        case "get": _ = try await store.get(key)
                        case "delete": try await store.delete(key)
                        default:
                            try await store.put(
                                .original(sha256: ContentHash.sha256Hex([1])),
                                [1],
                                contentType: "image/jpeg"
                            )
                        }
                        Issue.record("\(name): \(operation) succeeded")
                    } catch {
                        #expect(error.code == .denied, "\(name) \(operation): \(error)")
                        #expect(!error.isRetriable)
                        let text = "\(error) \(String(reflecting: error))"
                        #expect(!text.contains(wrongSecret) && !text.contains(s3.environment["AWS_SECRET_ACCESS_KEY"]!))
                        if operation == "get" {
                            // The body names S3's reason (signature or key), with the key ID scrubbed.
                            #expect(
                                error.reason.contains("SignatureDoesNotMatch")
                                    || error.reason.contains("InvalidAccessKeyId"),
                                "\(error)"
                            )
                            #expect(!error.reason.contains("AKIAUNKNOWNKEY000000"))
                        }
                    }
                }
            }
        }
    }

    @Test func aMissingBucketIsAnInvalidLocation() async throws {
        try await withS3 { s3 in
            let store = try s3.store(location: "s3://no-such-bucket?endpoint=\(s3.moto.endpoint)")
            do throws(ImageStoreError) {
                try await store.put(.original(sha256: ContentHash.sha256Hex([7])), [7], contentType: "image/jpeg")
                Issue.record("put into a missing bucket succeeded")
            } catch {
                #expect(error.code == .invalidLocation, "\(error)")
                #expect(error.reason.contains("NoSuchBucket"), "\(error)")
            }
        }
    }

    @Test func aClosedEndpointIsUnavailable() async throws {
        let port = try MotoServerProcess.freePort()
        let fetcher = try HTTPFetcher(configuration: HTTPFetcherConfiguration(), logger: .marqueeTest)
        let store = try ImageStores.make(
            location: "s3://\(Self.bucket)?endpoint=http://127.0.0.1:\(port)",
            environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "SECRETVALUE"],
            fetcher: fetcher,
            logger: .marqueeTest
        )
        do throws(ImageStoreError) {
            try await store.put(.original(sha256: ContentHash.sha256Hex([1])), [1], contentType: "image/jpeg")
            Issue.record("put succeeded with nothing listening")
        } catch {
            #expect(error.code == .unavailable, "\(error)")
            #expect(error.isRetriable)
            #expect(!error.description.contains("SECRETVALUE"))
        }
        await fetcher.shutdown()
    }
}
