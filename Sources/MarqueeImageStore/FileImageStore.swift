public import Logging
public import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``ImageStore`` in a local folder (`file://` locations): `<root>/ab/cd/<sha256>/<name>`.
///
/// - Writes are atomic: the bytes go to a temporary file in the key's folder (`.tmp-<random>-<name>`), which is
///   `fsync`ed and then hard-linked to its final name (`link(2)` fails instead of replacing an existing file, so
///   the first writer of a key wins and a stored file is never touched again); the temporary name is removed and
///   the folder `fsync`ed. Where the file system has no hard links, `rename(2)` is used instead.
/// - Folders are created with mode `0755`, files with `0644` (whatever the umask).
/// - Every blocking call runs on a `NIOThreadPool` (default: the shared singleton), never on the cooperative pool.
///
/// A crash between writing and linking can leave a `.tmp-*` file behind; it is never read and can be deleted.
public struct FileImageStore: ImageStore {
    /// The absolute root folder, without a trailing `/`.
    public let root: String
    private let threadPool: NIOThreadPool
    private let logger: Logger

    /// `file://<root>`.
    public var location: String { "file://" + self.root }

    /// Opens (and creates, with its parents, mode `0755`) the folder `root`.
    ///
    /// Creating the folder blocks the calling thread briefly; call this at start-up.
    ///
    /// - Parameters:
    ///   - root: An absolute path, or a path relative to the current directory.
    ///   - threadPool: Where blocking file I/O runs.
    ///   - logger: Receives one debug line per stored object.
    /// - Throws: An ``ImageStoreError`` if `root` is empty, not a folder, or cannot be created.
    public init(root: String, threadPool: NIOThreadPool = .singleton, logger: Logger) throws(ImageStoreError) {
        guard !root.isEmpty, !root.utf8.contains(0) else {
            throw ImageStoreError(code: .invalidLocation, reason: "the image folder path is empty")
        }
        self.root = try POSIXFiles.absolute(root)
        self.threadPool = threadPool
        self.logger = logger
        try POSIXFiles.makeFolders(self.root, from: "/")
    }

    /// `file://<root>/<key>`.
    public func url(for key: ImageKey) -> String { "file://" + self.path(of: key) }

    /// Checks for a regular file at the key's path.
    public func exists(_ key: ImageKey) async throws(ImageStoreError) -> Bool {
        let path = self.path(of: key)
        return try await self.run(key) { () throws(ImageStoreError) in try POSIXFiles.isRegularFile(path) }
    }

    /// Writes `bytes` atomically unless the key is already stored; `contentType` is not kept (the file name's
    /// extension says it).
    public func put(_ key: ImageKey, _ bytes: [UInt8], contentType: String) async throws(ImageStoreError) {
        let root = self.root
        let path = self.path(of: key)
        let written = try await self.run(key) { () throws(ImageStoreError) in
            try POSIXFiles.writeOnce(bytes, to: path, root: root)
        }
        self.logger.debug(
            written ? "image stored" : "image already stored",
            metadata: [
                MarqueeImageStoreLoggingKeys.key: "\(key)", MarqueeImageStoreLoggingKeys.bytes: "\(bytes.count)",
            ]
        )
    }

    /// Reads the key's file; `nil` when there is none.
    public func get(_ key: ImageKey) async throws(ImageStoreError) -> [UInt8]? {
        let path = self.path(of: key)
        return try await self.run(key) { () throws(ImageStoreError) in try POSIXFiles.read(path) }
    }

    /// Unlinks the key's file (none is fine), then its hash folder and the fan-out folders above it once they
    /// are empty.
    public func delete(_ key: ImageKey) async throws(ImageStoreError) {
        let root = self.root
        let path = self.path(of: key)
        try await self.run(key) { () throws(ImageStoreError) in try POSIXFiles.remove(path, upTo: root) }
        self.logger.debug("image removed", metadata: [MarqueeImageStoreLoggingKeys.key: "\(key)"])
    }

    private func path(of key: ImageKey) -> String { self.root + "/" + key.rawValue }

    /// Runs blocking file work on the thread pool; errors get the key attached.
    private func run<T: Sendable>(
        _ key: ImageKey,
        _ body: @escaping @Sendable () throws(ImageStoreError) -> T
    ) async throws(ImageStoreError) -> T {
        let result: Result<T, ImageStoreError>
        do {
            result = try await self.threadPool.runIfActive { () -> Result<T, ImageStoreError> in
                do throws(ImageStoreError) { return .success(try body()) } catch { return .failure(error) }
            }
        } catch {
            throw ImageStoreError(
                code: .unavailable,
                reason: "the file I/O thread pool is not running",
                key: key,
                underlying: error
            )
        }
        switch result {
        case .success(let value): return value
        case .failure(var error):
            error.key = key
            throw error
        }
    }
}

/// The blocking POSIX calls of ``FileImageStore``; each checks its result at once.
enum POSIXFiles {
    static let folderMode: mode_t = 0o755
    static let fileMode: mode_t = 0o644

    /// `path` made absolute against the current directory, with `.` components and trailing `/` removed.
    static func absolute(_ path: String) throws(ImageStoreError) -> String {
        var full = path
        if !path.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else {
                throw self.error(errno, "read the current directory for", path)
            }
            defer { free(cwd) }
            full = String(cString: cwd) + "/" + path
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") where part != "." {
            guard part != ".." else {
                throw ImageStoreError(code: .invalidLocation, reason: "the image folder \(path) must not contain ..")
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Creates each missing folder of `path` below `base` with mode 0755, `fsync`ing the parent of each new one.
    static func makeFolders(_ path: String, from base: String) throws(ImageStoreError) {
        var current = base == "/" ? "" : base
        let rest = path.dropFirst(base == "/" ? 1 : base.utf8.count + 1)
        for part in rest.split(separator: "/") {
            let parent = current.isEmpty ? "/" : current
            current += "/" + part
            if mkdir(current, self.folderMode) == 0 {
                // The umask may have narrowed the mode.
                guard chmod(current, self.folderMode) == 0 else { throw self.error(errno, "set the mode of", current) }
                self.syncFolder(parent)
                continue
            }
            let code = errno
            guard code == EEXIST else { throw self.error(code, "create the folder", current) }
            var status = stat()
            guard stat(current, &status) == 0 else { throw self.error(errno, "inspect", current) }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw ImageStoreError(code: .invalidLocation, reason: "\(current) exists and is not a folder")
            }
        }
    }

    /// Whether a regular file exists at `path`.
    static func isRegularFile(_ path: String) throws(ImageStoreError) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return false }
            throw self.error(code, "inspect", path)
        }
        return status.st_mode & S_IFMT == S_IFREG
    }

    /// The whole file at `path`, or `nil` when there is none.
    static func read(_ path: String) throws(ImageStoreError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw self.error(code, "open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw self.error(errno, "inspect", path) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw self.error(errno, "read", path)
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes `bytes` to `path` unless a file is there: temporary file, `fsync`, `link` (or `rename`), `fsync` of
    /// the folder. Returns whether this call stored the file.
    static func writeOnce(_ bytes: [UInt8], to path: String, root: String) throws(ImageStoreError) -> Bool {
        if try self.isRegularFile(path) { return false }
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))!
        let folder = String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        try self.makeFolders(folder, from: root)

        let temporary = folder + "/.tmp-" + String(UInt64.random(in: .min ... .max), radix: 16) + "-" + name
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, self.fileMode)
        guard descriptor >= 0 else { throw self.error(errno, "create", temporary) }
        var isOpen = true
        do throws(ImageStoreError) {
            guard fchmod(descriptor, self.fileMode) == 0 else { throw self.error(errno, "set the mode of", temporary) }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw self.error(errno, "write", temporary)
                }
                offset += written
            }
            // The data must be on disk before the name points at it.
            guard fsync(descriptor) == 0 else { throw self.error(errno, "fsync", temporary) }
            isOpen = false
            guard close(descriptor) == 0 else { throw self.error(errno, "close", temporary) }

            var stored = true
            if link(temporary, path) != 0 {
                let code = errno
                switch code {
                case EEXIST:
                    stored = false  // another writer won; its file is identical by construction
                case EPERM, EOPNOTSUPP, EXDEV, EMLINK:
                    // No hard links here (some network and FUSE file systems): rename, which may replace an equal file.
                    guard rename(temporary, path) == 0 else { throw self.error(errno, "rename to", path) }
                    self.syncFolder(folder)
                    return true
                default:
                    throw self.error(code, "link to", path)
                }
            }
            unlink(temporary)
            if stored { self.syncFolder(folder) }
            return stored
        } catch {
            if isOpen { close(descriptor) }
            unlink(temporary)
            throw error
        }
    }

    /// Unlinks the file at `path` (a missing one is fine), then removes its folders up to `root` while they are
    /// empty (another key's file, or a writer's temporary file, keeps a folder: `rmdir` refuses it).
    static func remove(_ path: String, upTo root: String) throws(ImageStoreError) {
        if unlink(path) != 0 {
            let code = errno
            guard code == ENOENT || code == ENOTDIR else { throw self.error(code, "remove", path) }
        }
        var folder = path
        while let slash = folder.utf8.lastIndex(of: UInt8(ascii: "/")) {
            folder = String(folder[..<slash])
            guard folder.utf8.count > root.utf8.count, rmdir(folder) == 0 else { break }
        }
        self.syncFolder(folder)
    }

    /// `fsync` of a folder, so a new entry survives a crash; best effort (some file systems refuse it).
    static func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// An error for `errno` `code` from the operation `action` on `path`.
    static func error(_ code: Int32, _ action: String, _ path: String) -> ImageStoreError {
        let text = String(cString: strerror(code))
        let reason = "cannot \(action) \(path): \(text) (errno \(code))"
        switch code {
        case EACCES, EPERM:
            return ImageStoreError(code: .denied, reason: reason)
        // A read-only file system is a mount gone read-only (a disk error, a remount): the store is down until
        // it is writable again, like a full one.
        case ENOSPC, EDQUOT, EIO, EAGAIN, ENOMEM, ESTALE, ETIMEDOUT, EBUSY, EMFILE, ENFILE, EINTR, EROFS:
            return ImageStoreError(code: .unavailable, reason: reason)
        case ENOTDIR, ENAMETOOLONG, ELOOP:
            return ImageStoreError(code: .invalidLocation, reason: reason)
        default:
            return ImageStoreError(code: .io, reason: reason)
        }
    }
}

/// `read(2)` (inside ``POSIXFiles`` the name is taken by its own `read`).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
