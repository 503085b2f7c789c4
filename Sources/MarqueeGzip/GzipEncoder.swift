internal import CMarqueeZlib
internal import Czlib

/// Compresses bytes given in pieces into one gzip stream.
///
/// Not `Sendable`: one task feeds it.
public final class GzipEncoder {
    private let stream: ZlibStream
    private var isFinished = false

    /// An encoder at `level` (1 fastest … 9 smallest).
    ///
    /// - Throws: A ``GzipError`` when zlib cannot allocate its state.
    public init(level: Int = 6) throws(GzipError) {
        precondition((1...9).contains(level), "a gzip level is 1…9, not \(level)")
        self.stream = try ZlibStream(.deflate(level: Int32(level)))
    }

    /// Compresses `input`, appending what zlib produced so far to `output`.
    public func encode(_ input: [UInt8], into output: inout [UInt8]) {
        precondition(!self.isFinished, "the gzip stream was finished")
        self.run(input, flush: Z_NO_FLUSH, into: &output)
    }

    /// Ends the stream: the rest of the compressed bytes and the gzip trailer are appended to `output`.
    public func finish(into output: inout [UInt8]) {
        precondition(!self.isFinished, "the gzip stream was finished")
        self.run([], flush: Z_FINISH, into: &output)
        self.isFinished = true
    }

    /// `bytes` as one gzip stream.
    public static func compress(_ bytes: [UInt8], level: Int = 6) throws(GzipError) -> [UInt8] {
        let encoder = try GzipEncoder(level: level)
        var output: [UInt8] = []
        encoder.encode(bytes, into: &output)
        encoder.finish(into: &output)
        return output
    }

    private func run(_ input: [UInt8], flush: Int32, into output: inout [UInt8]) {
        let stream = self.stream.raw
        input.withUnsafeBytes { bytes in
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self)
            )
            stream.pointee.avail_in = uInt(bytes.count)
            let piece = 64 * 1024
            while true {
                let start = output.count
                output.append(contentsOf: repeatElement(0, count: piece))
                let code = output.withUnsafeMutableBytes { out in
                    stream.pointee.next_out = out.baseAddress!.advanced(by: start).assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(piece)
                    return deflate(stream, flush)
                }
                let unused = Int(stream.pointee.avail_out)
                output.removeLast(unused)
                // deflate cannot fail on a valid stream with room to write; Z_BUF_ERROR only means nothing to do.
                precondition(code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR, "deflate failed: \(code)")
                if flush == Z_FINISH ? code == Z_STREAM_END : (stream.pointee.avail_in == 0 && unused > 0) {
                    break
                }
            }
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
    }
}
