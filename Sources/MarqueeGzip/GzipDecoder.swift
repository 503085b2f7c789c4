internal import CMarqueeZlib
internal import Czlib

/// Decompresses a gzip stream fed in pieces of any size, so a large file or download never has to be whole in
/// memory.
///
/// Several gzip members one after the other (as `cat a.gz b.gz` makes) read as one stream, as gunzip reads them.
/// A zlib stream is read too. ``finish()`` tells a stream that ended from one that was cut off.
///
/// Not `Sendable`: one task feeds it.
public final class GzipDecoder {
    private let stream: ZlibStream
    /// Whether the last member read so far ended (its trailer was read).
    public private(set) var isAtEnd = false
    /// Whether any input was given.
    private var hasInput = false
    /// Where zlib writes before the bytes are appended to the caller's output (kept between calls).
    private var scratch: [UInt8] = []
    /// Whether the last call filled its output, so zlib may hold more of it: call again, even with no input.
    public private(set) var hasPendingOutput = false

    /// A decoder at the start of a stream.
    ///
    /// - Throws: A ``GzipError`` when zlib cannot allocate its state.
    public init() throws(GzipError) {
        self.stream = try ZlibStream(.inflate)
    }

    /// Inflates the start of `input`, appending to `output`, until `input` is used up, a member ends, or `output`
    /// grew by `limit` bytes; call again with the rest of `input` (or with none while ``hasPendingOutput``).
    ///
    /// `limit` bounds what one call adds whatever the compression ratio, so a small input that inflates to a
    /// great deal (a "zip bomb") is read a bounded piece at a time.
    ///
    /// - Parameters:
    ///   - input: Compressed bytes.
    ///   - output: Where the decompressed bytes are appended.
    ///   - limit: The most bytes appended by this call.
    /// - Returns: How many bytes of `input` were used.
    /// - Throws: A ``GzipError`` (``GzipError/Code/corrupt``) when the input is not gzip or a check fails.
    public func decode(
        _ input: UnsafeRawBufferPointer,
        into output: inout [UInt8],
        limit: Int = 64 * 1024
    ) throws(GzipError) -> Int {
        precondition(limit > 0, "the output limit is at least one byte, not \(limit)")
        guard !input.isEmpty || self.hasPendingOutput else { return 0 }
        if !input.isEmpty {
            self.hasInput = true
            if self.isAtEnd {
                // Another member follows the one that ended.
                inflateReset(self.stream.raw)
                self.isAtEnd = false
            }
        }
        if self.scratch.count < limit { self.scratch = [UInt8](repeating: 0, count: limit) }
        let stream = self.stream.raw
        var none: UInt8 = 0
        let code = withUnsafeMutablePointer(to: &none) { empty in
            let base = input.baseAddress?.assumingMemoryBound(to: Bytef.self) ?? UnsafePointer(empty)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base)
            stream.pointee.avail_in = uInt(min(input.count, Int(UInt32.max)))
            return self.scratch.withUnsafeMutableBytes { bytes in
                stream.pointee.next_out = bytes.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(limit)
                return inflate(stream, Z_NO_FLUSH)
            }
        }
        let given = min(input.count, Int(UInt32.max))
        let unused = Int(stream.pointee.avail_out)
        output.append(contentsOf: self.scratch[0..<(limit - unused)])
        let used = given - Int(stream.pointee.avail_in)
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        // A full output may leave more inside zlib, even with all the input used.
        self.hasPendingOutput = unused == 0
        switch code {
        case Z_STREAM_END:
            self.isAtEnd = true
            self.hasPendingOutput = false
        case Z_OK:
            break
        case Z_BUF_ERROR:
            // No progress was possible: nothing left inside zlib, and no input to go on with.
            self.hasPendingOutput = false
        case Z_MEM_ERROR:
            throw GzipError(.outOfMemory, "zlib ran out of memory")
        default:
            throw GzipError(.corrupt, "not a valid gzip stream: \(self.stream.message ?? "zlib code \(code)")")
        }
        return used
    }

    /// Inflates all of `input`, appending to `output` (convenient where the piece is small).
    ///
    /// - Throws: A ``GzipError`` (``GzipError/Code/corrupt``) when the input is not gzip or a check fails.
    public func decode(_ input: [UInt8], into output: inout [UInt8]) throws(GzipError) {
        var failure: GzipError?
        input.withUnsafeBytes { bytes in
            var offset = 0
            do throws(GzipError) {
                while offset < bytes.count || self.hasPendingOutput {
                    offset += try self.decode(UnsafeRawBufferPointer(rebasing: bytes[offset...]), into: &output)
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Checks that the input ended where a stream ends.
    ///
    /// - Throws: A ``GzipError``: ``GzipError/Code/truncated`` when the input stopped inside a member (a cut
    ///   download), ``GzipError/Code/corrupt`` when there was no input at all.
    public func finish() throws(GzipError) {
        guard self.hasInput else { throw GzipError(.corrupt, "the input is empty: not a gzip stream") }
        guard self.isAtEnd else {
            throw GzipError(.truncated, "the gzip stream is cut off: the input ended before the stream did")
        }
    }
}
