import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The id of one job: a ULID (26 characters, Crockford base 32, sortable by creation time).
public struct JobID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A new id for now.
    ///
    /// Monotonic within a process (the ULID spec's variant): within one millisecond the random part counts up,
    /// so ids made in order sort in order, and the system's random source is read at most once a millisecond.
    public static func make(milliseconds: UInt64 = Self.nowMilliseconds()) -> JobID {
        let timestamp = milliseconds & 0xFFFF_FFFF_FFFF
        let random: UInt128 = Self.generator.withLock { state in
            if state.milliseconds == timestamp, state.random < Self.randomMask {
                state.random += 1
            } else {
                var system = SystemRandomNumberGenerator()
                state.milliseconds = timestamp
                state.random =
                    ((UInt128(system.next() as UInt64) << 16) | UInt128(system.next() as UInt16))
                    & (Self.randomMask >> 1)
            }
            return state.random
        }
        return Self.encode(timestamp: timestamp, random: random)
    }

    /// An id that is the same every time for the same `milliseconds` and `name`: a ULID whose timestamp part is
    /// `milliseconds` and whose 80 random bits are taken from a 128-bit FNV-1a hash of `name`.
    ///
    /// For jobs whose resend must be recognisable: `marquee-producer` names each job of a window by its schedule,
    /// window and index, so a window sent twice carries the same ids twice. Ids made by ``make(milliseconds:)``
    /// and by this never meet in practice (80 random bits against a hash).
    public static func deterministic(milliseconds: UInt64, name: String) -> JobID {
        var hash = NameHash()
        hash.add(name.utf8)
        return self.deterministic(milliseconds: milliseconds, hash: hash)
    }

    /// ``deterministic(milliseconds:name:)`` of a name already hashed (fed in parts, without joining them).
    static func deterministic(milliseconds: UInt64, hash: NameHash) -> JobID {
        Self.encode(timestamp: milliseconds & 0xFFFF_FFFF_FFFF, random: (hash.value >> 48) & Self.randomMask)
    }

    /// The 128-bit FNV-1a hash of a name's UTF-8 bytes, fed in parts.
    struct NameHash {
        private(set) var value: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d

        mutating func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes { self.add(byte) }
        }

        mutating func add(_ byte: UInt8) {
            self.value ^= UInt128(byte)
            self.value &*= 0x0000_0000_0100_0000_0000_0000_0000_013B
        }
    }

    /// Whether `text` can be a job id: 1 to 64 ASCII letters, digits, `-` or `_` (a ULID, a UUID, or a script's
    /// own id). Anything else — empty, too long, spaces, bytes that are not UTF-8 — cannot go into a record's key
    /// or the store, so a message carrying it is refused before its job runs.
    public static func isWellFormed(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
                || byte == 0x5F
        }
    }

    /// The timestamp part: milliseconds since the epoch, or nil when this is not a 26-character ULID.
    public var milliseconds: UInt64? {
        let characters = self.rawValue.utf8
        guard characters.count == 26 else { return nil }
        var value: UInt64 = 0
        for character in characters.prefix(10) {
            let digit = Self.digits[Int(character)]
            guard digit != 0xFF else { return nil }
            value = value << 5 | UInt64(digit)
        }
        // 10 characters hold 50 bits; the timestamp is the top 48 of the 128-bit value (the first character
        // carries 3 of them).
        return value & 0xFFFF_FFFF_FFFF
    }

    /// Each byte's place in ``alphabet`` (0xFF: none), so reading a timestamp makes no array and no search.
    private static let digits: [UInt8] = {
        var digits = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in Self.alphabet.enumerated() { digits[Int(character)] = UInt8(index) }
        return digits
    }()

    private static func encode(timestamp: UInt64, random: UInt128) -> JobID {
        let value = (UInt128(timestamp) << 80) | random
        // Written straight into the string's storage: no byte array first (a fetch job makes about nine ids).
        let alphabet = Self.alphabet
        let text = String(unsafeUninitializedCapacity: 26) { characters in
            for index in 0..<26 {
                let shift = UInt128(125 - index * 5)
                characters[index] = alphabet[Int((value >> shift) & 0x1F)]
            }
            return 26
        }
        return JobID(rawValue: text)
    }

    private static let randomMask: UInt128 = (1 << 80) - 1
    private static let generator = Mutex<(milliseconds: UInt64, random: UInt128)>((0, 0))

    /// Wall-clock milliseconds since the epoch.
    public static func nowMilliseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }

    public var description: String { self.rawValue }
}
