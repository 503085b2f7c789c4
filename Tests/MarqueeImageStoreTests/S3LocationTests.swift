import Foundation
import Logging
import MarqueeHTTP
import MarqueeImageStore
import Testing

@Suite struct S3LocationTests {
    static let key = ImageKey.original(sha256: ImageKeyTests.hash)

    @Test func endpointMeansPathStyle() throws {
        let location = try S3Location(
            parsing: "s3://posters/marquee/images?endpoint=http://127.0.0.1:9000&region=eu-west-1"
        )
        #expect(location.bucket == "posters")
        #expect(location.prefix == "marquee/images")
        #expect(location.region == "eu-west-1")
        #expect(location.usesPathStyle)
        #expect(location.objectURL(Self.key) == "http://127.0.0.1:9000/posters/marquee/images/\(Self.key)")
        #expect(location.bucketURL == "http://127.0.0.1:9000/posters")
        #expect(location.description == "s3://posters/marquee/images?region=eu-west-1&endpoint=http://127.0.0.1:9000")
    }

    @Test func awsIsVirtualHostedWithTheRegionFromTheEnvironment() throws {
        let location = try S3Location(parsing: "s3://posters", environment: ["AWS_REGION": "ap-northeast-2"])
        #expect(location.objectURL(Self.key) == "https://posters.s3.ap-northeast-2.amazonaws.com/\(Self.key)")
        #expect(try S3Location(parsing: "s3://posters/").region == "us-east-1")
        let pathStyle = try S3Location(parsing: "s3://posters/p/?path_style=true&region=us-west-2")
        #expect(pathStyle.objectURL(Self.key) == "https://s3.us-west-2.amazonaws.com/posters/p/\(Self.key)")
        let virtual = try S3Location(parsing: "s3://posters?endpoint=http%3A%2F%2Fminio.local%3A9000&path_style=false")
        #expect(virtual.objectURL(Self.key) == "http://posters.minio.local:9000/\(Self.key)")
    }

    @Test func rejectsMalformedLocationsWithoutEchoingCredentials() {
        let cases: [(String, String)] = [
            ("s3://", "bucket \"\" is not"),
            ("s3://ab", "is not 3–63"),
            ("s3://Posters", "is not 3–63"),
            ("s3://posters/a b", "prefix segment"),
            ("s3://posters/../x", "prefix segment"),
            ("s3://posters?endpiont=http://x", "unknown parameter \"endpiont\""),
            ("s3://posters?endpoint=ftp://x", "endpoint must be"),
            ("s3://posters?endpoint=http://AKID:SECRETVALUE@host:9000", "without credentials"),
            ("s3://AKID:SECRETVALUE@posters", "credentials do not belong"),
            ("s3://posters?endpoint=http://host/path", "without a path"),
            ("s3://posters?path_style=maybe", "path_style must be"),
        ]
        for (location, expected) in cases {
            do throws(ImageStoreError) {
                _ = try S3Location(parsing: location)
                Issue.record("\(location) was accepted")
            } catch {
                #expect(error.code == .invalidLocation)
                #expect(error.description.contains(expected), "\(location): \(error)")
                #expect(!error.description.contains("SECRETVALUE"))
            }
        }
    }

    @Test func credentialsComeFromTheEnvironmentOrFiles() async throws {
        try await withTemporaryFolder { folder in
            let secretFile = folder + "/secret"
            #expect(FileManager.default.createFile(atPath: secretFile, contents: Data("  file-secret\n".utf8)))
            let credentials = try S3Credentials.fromEnvironment([
                "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY_FILE": secretFile,
                "AWS_SESSION_TOKEN": "token-value",
            ])
            #expect(credentials.accessKeyID == "AKIDEXAMPLE")
            #expect(credentials.secretAccessKey == "file-secret")
            #expect(credentials.sessionToken == "token-value")
            for text in ["\(credentials)", String(reflecting: credentials), "\([credentials])"] {
                #expect(!text.contains("file-secret") && !text.contains("token-value"), "\(text)")
            }

            do throws(ImageStoreError) {
                _ = try S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"])
                Issue.record("missing secret accepted")
            } catch {
                #expect(error.code == .invalidLocation)
                #expect(error.reason.contains("AWS_SECRET_ACCESS_KEY"))
            }
            do throws(ImageStoreError) {
                _ = try S3Credentials.fromEnvironment([
                    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY_FILE": folder + "/missing",
                ])
                Issue.record("unreadable secret file accepted")
            } catch {
                #expect(error.reason.contains("AWS_SECRET_ACCESS_KEY_FILE"))
            }
        }
    }

    @Test func makeBuildsAnS3StoreWithoutFetcherOrFailsClearly() throws {
        let store = try ImageStores.make(
            location: "s3://posters/p?endpoint=http://127.0.0.1:9&region=us-east-1",
            environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "SECRETVALUE"],
            fetcher: nil,
            logger: .imageStoreTest
        )
        #expect(store.location == "s3://posters/p?region=us-east-1&endpoint=http://127.0.0.1:9")
        #expect(!store.location.contains("SECRETVALUE") && !store.location.contains("AKIDEXAMPLE"))
        #expect(store.url(for: Self.key) == "http://127.0.0.1:9/posters/p/\(Self.key)")
        #expect(throws: ImageStoreError.self) {
            try ImageStores.make(location: "s3://posters", environment: [:], fetcher: nil, logger: .imageStoreTest)
        }
    }
}
