import MarqueeGzip

#if canImport(Glibc)
import Glibc
#endif

/// Reads the lines of a TMDB export file one at a time, gunzipping as it goes: memory holds one piece of the
/// file and one piece of its text, whatever the file's size.
///
/// A file that does not start as gzip does (`1f 8b`) is read as the lines themselves (an export already
/// unpacked). Lines end with `\n` (a `\r` before it is dropped); the last may lack it.
///
/// Not `Sendable`: one task reads it. Reads are of a local file (no network), 64 KB at a time.
public final class TMDBExportReader {
    /// The file read.
    public let path: String
    /// The file's size in bytes (compressed, for an export as TMDB publishes it).
    public let size: Int64
    /// Bytes of the file read so far.
    public private(set) var bytesRead: Int64 = 0
    /// The number of the last line returned (from 1).
    public private(set) var lineNumber = 0

    /// Lines longer than this are refused (an export's are about 100 bytes): the file is not an export.
    public static let maxLineBytes = 1 << 20

    private static let pieceBytes = 64 * 1024
    private let file: Int32
    private let decoder: GzipDecoder?
    private var piece: [UInt8] = []
    private var pieceOffset = 0
    private var text: [UInt8] = []
    private var textStart = 0
    private var isAtEndOfFile = false

    /// Opens `path` and reads its first piece.
    ///
    /// - Throws: An ``OperationsError`` when the file cannot be read or is empty.
    public init(path: String) throws(OperationsError) {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else {
            throw OperationsError(.enqueue, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        fstat(file, &status)
        let first: [UInt8]
        let decoder: GzipDecoder?
        do {
            first = try Self.read(file, path: path)
            guard !first.isEmpty else { throw OperationsError(.enqueue, "\(path) is empty: not a TMDB export") }
            if first.count >= 2 && first[0] == 0x1F && first[1] == 0x8B {
                decoder = try GzipDecoder()
            } else {
                decoder = nil
            }
        } catch let error as OperationsError {
            close(file)
            throw error
        } catch {
            close(file)
            throw OperationsError(.enqueue, "cannot read \(path): \(error)")
        }
        self.path = path
        self.file = file
        self.size = Int64(status.st_size)
        self.bytesRead = Int64(first.count)
        self.decoder = decoder
        if decoder == nil {
            self.text = first
        } else {
            self.piece = first
        }
    }

    deinit { close(self.file) }

    /// Whether the file is gzip (else plain lines).
    public var isCompressed: Bool { self.decoder != nil }

    /// The next line (without its line break) and its number, or `nil` after the last.
    ///
    /// - Throws: An ``OperationsError`` when the file cannot be read, its gzip stream is corrupt or cut off, or
    ///   a line is longer than ``maxLineBytes``; it names the line the reading stopped at.
    public func nextLine() throws(OperationsError) -> (number: Int, bytes: [UInt8])? {
        while true {
            if let end = self.text[self.textStart...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = self.text[self.textStart..<end]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                self.textStart = end + 1
                self.lineNumber += 1
                return (self.lineNumber, Array(line))
            }
            if self.textStart > 0 {
                self.text.removeFirst(self.textStart)
                self.textStart = 0
            }
            guard self.text.count <= Self.maxLineBytes else {
                throw OperationsError(
                    .enqueue,
                    "line \(self.lineNumber + 1) of \(self.path) is longer than \(Self.maxLineBytes) bytes: not a TMDB export"
                )
            }
            guard try self.fill() else {
                guard !self.text.isEmpty else { return nil }
                var line = self.text[...]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                let bytes = Array(line)
                self.text = []
                self.lineNumber += 1
                return (self.lineNumber, bytes)
            }
        }
    }

    /// Adds text after ``text``; `false` when the file has no more.
    private func fill() throws(OperationsError) -> Bool {
        guard let decoder = self.decoder else {
            guard !self.isAtEndOfFile else { return false }
            let more = try Self.read(self.file, path: self.path)
            self.bytesRead += Int64(more.count)
            if more.isEmpty {
                self.isAtEndOfFile = true
                return false
            }
            self.text.append(contentsOf: more)
            return true
        }
        if self.pieceOffset == self.piece.count && !decoder.hasPendingOutput {
            self.piece = try Self.read(self.file, path: self.path)
            self.pieceOffset = 0
            self.bytesRead += Int64(self.piece.count)
            if self.piece.isEmpty {
                do {
                    try decoder.finish()
                } catch {
                    throw OperationsError(
                        .enqueue,
                        "\(self.path) is cut off after line \(self.lineNumber) (\(self.bytesRead) bytes): \(error.reason)"
                    )
                }
                return false
            }
        }
        var failure: GzipError?
        self.piece.withUnsafeBytes { bytes in
            do throws(GzipError) {
                self.pieceOffset += try decoder.decode(
                    UnsafeRawBufferPointer(rebasing: bytes[self.pieceOffset...]),
                    into: &self.text,
                    limit: Self.pieceBytes
                )
            } catch {
                failure = error
            }
        }
        if let failure {
            throw OperationsError(
                .enqueue,
                "\(self.path) is not a readable gzip export after line \(self.lineNumber): \(failure.reason)"
            )
        }
        return true
    }

    private static func read(_ file: Int32, path: String) throws(OperationsError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.pieceBytes)
        while true {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if count >= 0 {
                bytes.removeLast(bytes.count - count)
                return bytes
            }
            if errno != EINTR {
                throw OperationsError(.enqueue, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
        }
    }
}
