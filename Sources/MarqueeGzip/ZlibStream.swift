internal import CMarqueeZlib
internal import Czlib

/// Owns one zlib `z_stream`, set up for inflating or deflating.
///
/// zlib keeps pointers into the `z_stream` itself, so it lives in memory of its own that never moves. Not
/// `Sendable`: one task uses it at a time.
final class ZlibStream {
    enum Direction {
        case inflate
        case deflate(level: Int32)
    }

    let raw: UnsafeMutablePointer<z_stream>
    let direction: Direction

    /// windowBits 15 + 32: a gzip or zlib header, detected (inflate); 15 + 16: a gzip header and trailer
    /// (deflate).
    init(_ direction: Direction) throws(GzipError) {
        let raw = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        raw.initialize(to: z_stream())
        let code: Int32
        switch direction {
        case .inflate: code = CMarqueeZlib_inflateInit2(raw, 15 + 32)
        case .deflate(let level): code = CMarqueeZlib_deflateInit2(raw, level, 15 + 16, 8)
        }
        guard code == Z_OK else {
            // Nothing to end: a failed init leaves no state.
            raw.deinitialize(count: 1)
            raw.deallocate()
            throw code == Z_MEM_ERROR
                ? GzipError(.outOfMemory, "zlib could not allocate its state")
                : GzipError(.corrupt, "zlib refused to start (code \(code))")
        }
        self.raw = raw
        self.direction = direction
    }

    deinit {
        switch self.direction {
        case .inflate: inflateEnd(self.raw)
        case .deflate: deflateEnd(self.raw)
        }
        self.raw.deinitialize(count: 1)
        self.raw.deallocate()
    }

    /// zlib's own words for the last error, if it left any.
    var message: String? { self.raw.pointee.msg.map { String(cString: $0) } }
}
