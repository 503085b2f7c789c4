import func Foundation.cos
import func Foundation.pow

/// A BlurHash encoder (<https://blurha.sh>), written from the algorithm's public description.
///
/// The image (sRGB, 8 bits, 3 bands) is converted to linear light and projected onto `componentsX` ×
/// `componentsY` cosine basis functions, `cos(π·i·x/W) · cos(π·j·y/H)`. The first (DC) term is the average colour;
/// the others (AC) are quantised against their largest magnitude. The string is, in base 83:
/// 1 character for the component counts, 1 for the AC maximum, 4 for the DC colour (sRGB, 24 bits), and 2 for each
/// AC term (19 levels per channel after a signed square root) — 28 characters for 4 × 3 components.
enum BlurHash {
    /// BlurHash's base-83 alphabet.
    static let alphabet: [UInt8] = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8
    )

    /// The linear-light value of each 8-bit sRGB level.
    private static let linearTable: [Double] = (0..<256).map { level in
        let value = Double(level) / 255
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// The result: the hash and the average colour it encodes as its DC term.
    struct Encoded {
        /// The BlurHash string.
        var hash: String
        /// The DC term as 8-bit sRGB.
        var averageColor: (red: UInt8, green: UInt8, blue: UInt8)
    }

    /// Encodes `pixels` (`width` × `height`, RGB interleaved, row by row).
    ///
    /// - Precondition: `componentsX` and `componentsY` are 1…9; `pixels.count == width * height * 3`.
    static func encode(
        pixels: [UInt8],
        width: Int,
        height: Int,
        componentsX: Int = 4,
        componentsY: Int = 3
    ) -> Encoded {
        precondition((1...9).contains(componentsX) && (1...9).contains(componentsY), "BlurHash components are 1…9")
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "BlurHash: pixels do not match")
        // Linear light once per pixel. The 2-D basis cos(π·i·x/W) · cos(π·j·y/H) is separable, so each row is
        // first projected on the column terms (W × componentsX per row), then those sums on the row terms: the
        // same sums as the direct double loop over every (i, j), in W · H · componentsX steps instead of
        // W · H · componentsX · componentsY (a 92 × 138 placeholder source costs about 0.1 ms).
        let linear = pixels.map { Self.linearTable[Int($0)] }
        let columns = Self.basis(componentsX, width)
        let rows = Self.basis(componentsY, height)
        // rowSums[(y · componentsX + i) · 3 + channel] = Σₓ cos(π·i·x/W) · linear(x, y, channel)
        var rowSums = [Double](repeating: 0, count: height * componentsX * 3)
        linear.withUnsafeBufferPointer { linear in
            columns.withUnsafeBufferPointer { columns in
                rowSums.withUnsafeMutableBufferPointer { rowSums in
                    for y in 0..<height {
                        let row = y * width * 3
                        for i in 0..<componentsX {
                            let basis = i * width
                            var red = 0.0
                            var green = 0.0
                            var blue = 0.0
                            for x in 0..<width {
                                let weight = columns[basis + x]
                                red += weight * linear[row + x * 3]
                                green += weight * linear[row + x * 3 + 1]
                                blue += weight * linear[row + x * 3 + 2]
                            }
                            let out = (y * componentsX + i) * 3
                            rowSums[out] = red
                            rowSums[out + 1] = green
                            rowSums[out + 2] = blue
                        }
                    }
                }
            }
        }

        var factors: [(Double, Double, Double)] = []
        factors.reserveCapacity(componentsX * componentsY)
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                var red = 0.0
                var green = 0.0
                var blue = 0.0
                for y in 0..<height {
                    let weight = rows[j * height + y]
                    let sums = (y * componentsX + i) * 3
                    red += weight * rowSums[sums]
                    green += weight * rowSums[sums + 1]
                    blue += weight * rowSums[sums + 2]
                }
                let normalisation = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
                factors.append((red * normalisation, green * normalisation, blue * normalisation))
            }
        }

        var hash: [UInt8] = []
        Self.append((componentsX - 1) + (componentsY - 1) * 9, digits: 1, to: &hash)
        let ac = factors.dropFirst()
        var maximum = 1.0
        if ac.isEmpty {
            Self.append(0, digits: 1, to: &hash)
        } else {
            let largest = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = max(0, min(82, Int((largest * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            Self.append(quantised, digits: 1, to: &hash)
        }
        let dc = factors[0]
        let average = (Self.srgb(dc.0), Self.srgb(dc.1), Self.srgb(dc.2))
        Self.append(Int(average.0) << 16 | Int(average.1) << 8 | Int(average.2), digits: 4, to: &hash)
        for term in ac {
            func level(_ value: Double) -> Int {
                let scaled = value / maximum
                let root = (scaled < 0 ? -1.0 : 1.0) * abs(scaled).squareRoot()
                return max(0, min(18, Int((root * 9 + 9.5).rounded(.down))))
            }
            Self.append(level(term.0) * 19 * 19 + level(term.1) * 19 + level(term.2), digits: 2, to: &hash)
        }
        return Encoded(
            hash: String(decoding: hash, as: UTF8.self),
            averageColor: (red: average.0, green: average.1, blue: average.2)
        )
    }

    /// cos(π·k·n/length) for k in 0..<count and n in 0..<length, row k at k · length.
    private static func basis(_ count: Int, _ length: Int) -> [Double] {
        var values = [Double](repeating: 0, count: count * length)
        for k in 0..<count {
            for n in 0..<length { values[k * length + n] = cos(Double.pi * Double(k) * Double(n) / Double(length)) }
        }
        return values
    }

    /// The 8-bit sRGB level of a linear-light value (clamped to 0…1, rounded).
    static func srgb(_ linear: Double) -> UInt8 {
        let value = max(0, min(1, linear))
        let encoded = value <= 0.0031308 ? value * 12.92 : 1.055 * pow(value, 1 / 2.4) - 0.055
        return UInt8((encoded * 255 + 0.5).rounded(.down))
    }

    /// Appends `value` as `digits` base-83 digits, most significant first.
    private static func append(_ value: Int, digits: Int, to hash: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(1, digits) { divisor *= 83 }
        for _ in 0..<digits {
            hash.append(Self.alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }
}
