import Testing

@testable import MarqueeImaging

struct BlurHashTests {
    @Test func flatImageEncodesItsColour() {
        let pixels = [UInt8]((0..<(16 * 12)).flatMap { _ in [255, 0, 0] as [UInt8] })
        let encoded = BlurHash.encode(pixels: pixels, width: 16, height: 12)
        // 21 = (4 − 1) + (3 − 1) × 9 → "L"; DC 0xff0000 = 16711680 → "TI:j". (The basis samples cos(π·i·x/W) at
        // x = 0…W−1, as the reference does, so odd terms of a flat image are not exactly zero.)
        #expect(encoded.hash.hasPrefix("L"))
        #expect(encoded.hash.dropFirst(2).hasPrefix("TI:j"))
        #expect(encoded.averageColor == (255, 0, 0))
    }

    /// Checked against the reference algorithm (the PyPI package `blurhash` 1.1.5, `blurhash.encode`), once,
    /// offline: a 4 × 3 image of fixed colours.
    @Test func matchesTheReferenceEncoder() {
        let pixels: [UInt8] = [
            255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0,
            10, 20, 30, 200, 100, 50, 0, 0, 0, 255, 255, 255,
            90, 180, 45, 30, 60, 120, 128, 128, 128, 250, 10, 130,
        ]
        #expect(BlurHash.encode(pixels: pixels, width: 4, height: 3).hash == "L]JtegNY$u}@_1v$+@=Ly9$R+@+c")
    }

    @Test func lengthAndAlphabetFollowTheComponents() {
        var random = SplitMix64(seed: 3)
        let pixels = (0..<(20 * 30 * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        for (x, y) in [(1, 1), (4, 3), (9, 9)] {
            let hash = BlurHash.encode(pixels: pixels, width: 20, height: 30, componentsX: x, componentsY: y).hash
            #expect(hash.utf8.count == 4 + 2 * x * y)
            #expect(hash.utf8.allSatisfy { BlurHash.alphabet.contains($0) })
        }
    }

    @Test func horizontalGradientHasEnergyInTheFirstColumnTerm() {
        // Dark on the left, light on the right: the (1, 0) term is strong, the (0, 1) term is flat.
        let width = 32
        let height = 24
        var pixels: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width { pixels += Array(repeating: UInt8(x * 255 / (width - 1)), count: 3) }
        }
        let hash = Array(BlurHash.encode(pixels: pixels, width: width, height: height).hash)
        // AC terms start at index 6, in order (1,0), (2,0), (3,0), (0,1) …; each is 19 levels per channel,
        // 9 being zero.
        func deviation(_ at: Int) -> Int {
            let digits = hash[at..<at + 2].map { BlurHash.alphabet.firstIndex(of: $0.asciiValue!)! }
            return abs(digits[0] * 83 + digits[1]) / 361 - 9
        }
        #expect(abs(deviation(6)) > abs(deviation(12)) + 3)
    }
}
