/// Maps catalogue indices to sparse, real-looking ids (TMDB `550`, Open Library `OL8503198W`) and back,
/// without a table: `id = base + index × step + hash(index) mod step`, so decoding checks the offset.
struct SparseID: Sendable {
    let seed: UInt64
    let salt: UInt64
    let base: Int
    let step: Int
    let count: Int

    func id(_ index: Int) -> Int {
        self.base + index * self.step + Int(StableHash.combine(self.seed, self.salt, UInt64(index)) % UInt64(self.step))
    }

    func index(_ id: Int) -> Int? {
        guard id >= self.base else { return nil }
        let index = (id - self.base) / self.step
        guard index < self.count, self.id(index) == id else { return nil }
        return index
    }
}

/// TMDB-style image file names (`/kqjL17yufvn9OVLyXYpvtyrFfak.jpg`) that encode what to render, checked
/// against the seed so an invented name is a 404.
enum ImagePathCodec {
    private static let alphabet: [Character] = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// The kind of picture a file name stands for.
    enum Kind: Int, Sendable {
        case poster = 1
        case backdrop = 2
        case logo = 3
        case avatar = 4
    }

    static func encode(seed: UInt64, kind: Kind, index: Int, variant: Int) -> String {
        let value = UInt64(index) << 8 | UInt64(kind.rawValue) << 4 | UInt64(variant & 0xF)
        var random = SeededRandom(seed, 0x1_A6E5, value)
        var name = String((0..<20).map { _ in alphabet[Int(random.next() % 62)] })
        var rest = value
        var tail: [Character] = []
        for _ in 0..<7 {
            tail.append(alphabet[Int(rest % 62)])
            rest /= 62
        }
        name += String(tail)
        return "/\(name).jpg"
    }

    /// Decodes a file name (with or without the leading slash and `.jpg`).
    static func decode(seed: UInt64, _ name: Substring) -> (kind: Kind, index: Int, variant: Int)? {
        var body = name
        if body.hasPrefix("/") { body = body.dropFirst() }
        guard body.hasSuffix(".jpg") else { return nil }
        body = body.dropLast(4)
        guard body.count == 27 else { return nil }
        var value: UInt64 = 0
        for character in body.suffix(7).reversed() {
            guard let digit = alphabet.firstIndex(of: character) else { return nil }
            value = value * 62 + UInt64(digit)
        }
        guard let kind = Kind(rawValue: Int((value >> 4) & 0xF)) else { return nil }
        let index = Int(value >> 8)
        let variant = Int(value & 0xF)
        guard encode(seed: seed, kind: kind, index: index, variant: variant) == "/\(body).jpg" else { return nil }
        return (kind, index, variant)
    }
}
