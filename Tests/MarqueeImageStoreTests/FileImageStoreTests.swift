import Foundation
import Logging
import MarqueeImageStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder under the system's temporary folder, removed afterwards.
func withTemporaryFolder<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.path + "/marquee-imagestore-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

extension Logger {
    static let imageStoreTest: Logger = {
        var logger = Logger(label: "marquee-imagestore-test")
        logger.logLevel = .info
        return logger
    }()
}

/// Every file below `root` (relative paths).
func allFiles(under root: String) -> [String] {
    (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { relative in
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder)
        return !isFolder.boolValue
    }
}

func mode(of path: String) -> mode_t {
    var status = stat()
    precondition(stat(path, &status) == 0, "stat \(path)")
    return status.st_mode & 0o777
}

func modificationTime(of path: String) -> timespec {
    var status = stat()
    precondition(stat(path, &status) == 0, "stat \(path)")
    return status.st_mtim
}

@Suite(.timeLimit(.minutes(1)))
struct FileImageStoreTests {
    static let poster: [UInt8] = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// Deleting removes the file, then its folders once they are empty; a missing key is no error.
    @Test func deleteRemovesTheFileAndEmptyFolders() async throws {
        try await withTemporaryFolder { folder in
            let store = try FileImageStore(root: "\(folder)/images", logger: .imageStoreTest)
            let hash = ContentHash.sha256Hex(Self.poster)
            let other = ContentHash.sha256Hex(Array(Self.poster.dropFirst()))
            let variant = ImageKey.variant(sha256: hash, width: 92, format: "webp")
            let manifest = ImageKey.manifest(sha256: hash)
            try await store.put(variant, Self.poster, contentType: "image/webp")
            try await store.put(manifest, [1], contentType: "application/json")
            try await store.put(ImageKey.manifest(sha256: other), [2], contentType: "application/json")

            try await store.delete(variant)
            #expect(try await store.exists(variant) == false)
            #expect(try await store.exists(manifest), "the other file of the image stays")
            try await store.delete(manifest)
            try await store.delete(manifest)  // already gone: fine
            let imageFolder = "\(folder)/images/\(hash.prefix(2))/\(hash.dropFirst(2).prefix(2))/\(hash)"
            #expect(!FileManager.default.fileExists(atPath: imageFolder), "the empty hash folder went too")
            #expect(FileManager.default.fileExists(atPath: "\(folder)/images"), "the root stays")
            #expect(try await store.exists(ImageKey.manifest(sha256: other)), "another image is untouched")
        }
    }

    @Test func putExistsGetRoundTrip() async throws {
        try await withTemporaryFolder { folder in
            let store = try ImageStores.make(
                location: "file://\(folder)/images",
                environment: [:],
                fetcher: nil,
                logger: .imageStoreTest
            )
            #expect(store.location == "file://\(folder)/images")
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(Self.poster))
            #expect(try await store.exists(key) == false)
            #expect(try await store.get(key) == nil)
            try await store.put(key, Self.poster, contentType: "image/jpeg")
            #expect(try await store.exists(key))
            #expect(try await store.get(key) == Self.poster)
            let path = "\(folder)/images/\(key.rawValue)"
            #expect(store.url(for: key) == "file://" + path)
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == Self.poster)

            let variant = ImageKey.variant(sha256: key.sha256, width: 342, format: "webp")
            try await store.put(variant, [1, 2, 3], contentType: "image/webp")
            #expect(try await store.get(variant) == [1, 2, 3])
            #expect(try await store.get(key) == Self.poster, "a variant sits beside its original")
            let empty = ImageKey.variant(sha256: key.sha256, width: 92, format: "webp")
            try await store.put(empty, [], contentType: "image/webp")
            #expect(try await store.get(empty) == [])
        }
    }

    @Test func layoutModesAndNoTemporaryFilesLeft() async throws {
        try await withTemporaryFolder { folder in
            let previous = umask(0o077)  // a strict umask must not narrow the documented modes
            defer { umask(previous) }
            let store = try FileImageStore(root: folder + "/store", logger: .imageStoreTest)
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(Self.poster))
            try await store.put(key, Self.poster, contentType: "image/jpeg")
            let hash = key.sha256
            let first = "\(folder)/store/\(hash.prefix(2))"
            let second = first + "/\(hash.dropFirst(2).prefix(2))"
            for created in [first, second, second + "/\(hash)"] { #expect(mode(of: created) == 0o755, "\(created)") }
            #expect(mode(of: "\(folder)/store/\(key.rawValue)") == 0o644)
            #expect(allFiles(under: folder + "/store") == [key.rawValue], "only the stored file, no temporary one")
        }
    }

    @Test func aSecondPutOfAStoredKeyWritesNothing() async throws {
        try await withTemporaryFolder { folder in
            let store = try FileImageStore(root: folder, logger: .imageStoreTest)
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(Self.poster))
            try await store.put(key, Self.poster, contentType: "image/jpeg")
            let path = "\(folder)/\(key.rawValue)"
            // Backdate the file, so any rewrite would show as a new modification time even within one clock tick.
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            var inode = stat()
            stat(path, &inode)

            try await store.put(key, Self.poster, contentType: "image/jpeg")
            // Content addressing: even different bytes under a stored key are not written.
            try await store.put(key, [0xFF], contentType: "image/jpeg")

            #expect(modificationTime(of: path).tv_sec == 1_000_000_000)
            var after = stat()
            stat(path, &after)
            #expect(after.st_ino == inode.st_ino)
            #expect(try await store.get(key) == Self.poster)
            #expect(allFiles(under: folder) == [key.rawValue])
        }
    }

    @Test func concurrentPutsOfOneKeyLeaveOneIntactFile() async throws {
        try await withTemporaryFolder { folder in
            let store = try FileImageStore(root: folder, logger: .imageStoreTest)
            let bytes: [UInt8] = (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let key = ImageKey.original(sha256: ContentHash.sha256Hex(bytes))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<32 {
                    group.addTask { try await store.put(key, bytes, contentType: "image/jpeg") }
                }
                try await group.waitForAll()
            }
            #expect(try await store.get(key) == bytes)
            #expect(allFiles(under: folder) == [key.rawValue], "no temporary file left by the writers that lost")
        }
    }

    @Test func relativeLocationsResolveAgainstTheCurrentFolder() async throws {
        // No chdir: the current folder is process-wide and other suites run concurrently. Under .build (ignored).
        let relative = ".build/marquee-imagestore-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: relative) }
        let store = try ImageStores.make(
            location: "file://./\(relative)/images",
            environment: [:],
            fetcher: nil,
            logger: .imageStoreTest
        )
        #expect(store.location == "file://\(FileManager.default.currentDirectoryPath)/\(relative)/images")
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: relative + "/images", isDirectory: &isFolder))
        #expect(isFolder.boolValue)
    }

    @Test func badLocationsGiveClearErrors() async throws {
        try await withTemporaryFolder { folder in
            let file = folder + "/plain-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
            let cases: [(String, String)] = [
                ("ftp://example.org/images", "unsupported image store scheme ftp://"),
                ("./var/images", "expected file://… or s3://…"),
                ("file://", "file://./relative/path or file:///absolute/path"),
                ("file://example.org/images", "must start with / or ./"),
                ("file://\(file)", "exists and is not a folder"),
                ("file://\(file)/images", "\(file) exists and is not a folder"),
                ("file:///a/../b", "must not contain .."),
            ]
            for (location, expected) in cases {
                do throws(ImageStoreError) {
                    _ = try ImageStores.make(
                        location: location,
                        environment: [:],
                        fetcher: nil,
                        logger: .imageStoreTest
                    )
                    Issue.record("\(location) was accepted")
                } catch {
                    #expect(error.code == .invalidLocation, "\(location): \(error)")
                    #expect(error.description.contains(expected), "\(location): \(error)")
                    #expect(!error.isRetriable)
                }
            }
        }
    }

    @Test func aFileWhereAFolderBelongsIsReported() async throws {
        try await withTemporaryFolder { folder in
            let store = try FileImageStore(root: folder, logger: .imageStoreTest)
            let key = ImageKey.original(sha256: ContentHash.sha256Hex([1]))
            #expect(FileManager.default.createFile(atPath: folder + "/" + key.rawValue.prefix(2), contents: Data([0])))
            do throws(ImageStoreError) {
                try await store.put(key, [1], contentType: "image/jpeg")
                Issue.record("put succeeded")
            } catch {
                #expect(error.code == .invalidLocation)
                #expect(error.key == key)
                #expect(error.description.contains("is not a folder"), "\(error)")
            }
            #expect(try await store.exists(key) == false)
            #expect(try await store.get(key) == nil)
        }
    }

    @Test func unwritableFolderIsDenied() async throws {
        guard geteuid() != 0 else { return }  // root ignores permissions
        try await withTemporaryFolder { folder in
            let store = try FileImageStore(root: folder + "/store", logger: .imageStoreTest)
            chmod(folder + "/store", 0o555)
            defer { chmod(folder + "/store", 0o755) }
            let key = ImageKey.original(sha256: ContentHash.sha256Hex([1]))
            await #expect(throws: ImageStoreError.self) { try await store.put(key, [1], contentType: "image/jpeg") }
        }
    }
}
