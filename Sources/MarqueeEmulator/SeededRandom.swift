/// Deterministic pseudo-random numbers: everything the emulator generates comes from the seed through these,
/// never from the system's generator, so the same seed gives byte-identical responses.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator for one entity: the seed mixed with the entity's salt values.
    init(_ values: UInt64...) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for value in values { state = StableHash.mix(state ^ value) }
        self.state = state
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        return StableHash.mix(self.state)
    }

    /// A value in `0..<1`.
    mutating func unit() -> Double { Double(self.next() >> 11) / Double(1 << 53) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { self.unit() < p }

    /// An integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(self.next() % UInt64(range.count))
    }

    /// One element of a non-empty array.
    mutating func pick<T>(_ values: [T]) -> T { values[Int(self.next() % UInt64(values.count))] }
}

/// Stable 64-bit hashing (Swift's `Hasher` is seeded per process, so it cannot be used for output).
enum StableHash {
    /// SplitMix64's finalizer: a good avalanche of one word.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Mixes several words into one.
    static func combine(_ values: UInt64...) -> UInt64 {
        var state: UInt64 = 0x243F_6A88_85A3_08D3
        for value in values { state = Self.mix(state ^ value) }
        return state
    }

    /// A value in `0..<1` from the given words.
    static func unit(_ values: UInt64...) -> Double {
        var state: UInt64 = 0x243F_6A88_85A3_08D3
        for value in values { state = Self.mix(state ^ value) }
        return Double(state >> 11) / Double(1 << 53)
    }

    /// FNV-1a over bytes, then mixed.
    static func bytes(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return Self.mix(hash)
    }

    /// A 128-bit content digest as 32 hex digits (two FNV-1a lanes), for strong ETags.
    static func digest(_ bytes: [UInt8]) -> String {
        var a: UInt64 = 0xCBF2_9CE4_8422_2325
        var b: UInt64 = 0x8422_2325_CBF2_9CE4
        bytes.withUnsafeBufferPointer { buffer in
            for byte in buffer {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_0193
            }
        }
        return Self.hex(Self.mix(a ^ UInt64(bytes.count)), width: 16) + Self.hex(Self.mix(b), width: 16)
    }

    /// Lower-case hex of `value`, zero-padded to `width` digits.
    static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
