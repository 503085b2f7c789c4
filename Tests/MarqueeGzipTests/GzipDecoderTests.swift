import MarqueeGzip
import Testing

@Suite struct GzipDecoderTests {
    /// Text that compresses the way an export does: similar lines.
    static let text: [UInt8] = Array(
        (1...20_000).map { #"{"adult":false,"id":\#($0 * 13),"popularity":\#(Double($0 % 97) / 7)}"# }
            .joined(separator: "\n").utf8
    )

    static func decode(_ compressed: [UInt8], piece: Int) throws -> [UInt8] {
        let decoder = try GzipDecoder()
        var output: [UInt8] = []
        for start in stride(from: 0, to: compressed.count, by: piece) {
            try decoder.decode(Array(compressed[start..<min(start + piece, compressed.count)]), into: &output)
        }
        try decoder.finish()
        return output
    }

    @Test(arguments: [1, 7, 4096, 1 << 20])
    func piecesOfAnySizeGiveBackTheText(piece: Int) throws {
        let compressed = try GzipEncoder.compress(Self.text)
        #expect(compressed.count < Self.text.count / 3)
        #expect(try Self.decode(compressed, piece: piece) == Self.text)
    }

    @Test func membersOneAfterTheOtherReadAsOneStream() throws {
        let first = try GzipEncoder.compress(Array("first\n".utf8))
        let second = try GzipEncoder.compress(Array("second\n".utf8))
        #expect(try Self.decode(first + second, piece: 5) == Array("first\nsecond\n".utf8))
    }

    @Test func aCutStreamIsTruncatedNotShort() throws {
        let compressed = try GzipEncoder.compress(Self.text)
        let decoder = try GzipDecoder()
        var output: [UInt8] = []
        try decoder.decode(Array(compressed.prefix(compressed.count / 2)), into: &output)
        #expect(!output.isEmpty)
        #expect(throws: GzipError.self) { try decoder.finish() }
        do {
            try decoder.finish()
        } catch {
            #expect(error.code == .truncated)
            #expect(error.reason.contains("cut off"))
        }
        // Cut inside the 8-byte trailer: every byte of text may be there, the stream still did not end.
        let trailerless = try GzipDecoder()
        var all: [UInt8] = []
        try trailerless.decode(Array(compressed.dropLast(3)), into: &all)
        #expect(throws: GzipError(.truncated, "the gzip stream is cut off: the input ended before the stream did")) {
            try trailerless.finish()
        }
    }

    @Test func bytesThatAreNotGzipAreCorrupt() throws {
        let decoder = try GzipDecoder()
        var output: [UInt8] = []
        #expect {
            try decoder.decode(Array("{\"id\":1}\n".utf8), into: &output)
        } throws: { ($0 as? GzipError)?.code == .corrupt }

        var damaged = try GzipEncoder.compress(Self.text)
        damaged[damaged.count / 2] ^= 0xFF
        #expect {
            _ = try Self.decode(damaged, piece: 4096)
        } throws: { ($0 as? GzipError)?.code == .corrupt }
    }

    @Test func noInputIsNotAStream() throws {
        let decoder = try GzipDecoder()
        #expect { try decoder.finish() } throws: { ($0 as? GzipError)?.code == .corrupt }
    }

    @Test func oneCallAddsAtMostItsLimitWhateverTheRatio() throws {
        // 8 MB of zeros compress to a few KB: a small input that inflates to a great deal.
        let compressed = try GzipEncoder.compress([UInt8](repeating: 0, count: 8 << 20))
        #expect(compressed.count < 64 * 1024)
        let decoder = try GzipDecoder()
        var total = 0
        try compressed.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count || decoder.hasPendingOutput {
                var output: [UInt8] = []
                offset += try decoder.decode(
                    UnsafeRawBufferPointer(rebasing: bytes[offset...]),
                    into: &output,
                    limit: 65536
                )
                #expect(output.count <= 65536)
                total += output.count
            }
        }
        try decoder.finish()
        #expect(total == 8 << 20)
    }
}
