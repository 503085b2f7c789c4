/// A JSON object: its members in the order they were read or added, each key once.
///
/// An array of pairs rather than a `Dictionary`: the objects a stage reads and writes have a few dozen members
/// at most, looked up a handful of times each, and a dictionary hashes every key on the way in, again on every
/// lookup, and costs more to build and to free (BENCHMARKS.md, "CPU per job, sixth round"). A lookup compares
/// keys one by one instead, up to ``indexThreshold`` members; a larger object (a hostile payload, say) also keeps
/// a dictionary of its keys' positions, so no lookup, insertion or comparison becomes quadratic.
///
/// Two objects are equal when they hold the same keys with equal values, in any order (as JSON objects are);
/// ``JSONValue/encoded()`` writes the keys sorted either way.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// Past this many members, keys are found through a dictionary of their positions.
    static let indexThreshold = 32

    /// The members, each key once.
    public private(set) var members: [Element]
    /// Each key's place in `members`, kept only past ``indexThreshold`` members.
    private var positions: [String: Int]?

    /// An empty object.
    public init() { self.members = [] }

    /// An empty object with room for `capacity` members.
    public init(minimumCapacity capacity: Int) {
        self.members = []
        self.members.reserveCapacity(capacity)
    }

    /// The members of a dictionary, in the order of their keys.
    public init(_ dictionary: [String: JSONValue]) {
        self.init(uniqueMembers: dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
    }

    /// Members known to name each key once (the reader's, after its duplicate check).
    init(uniqueMembers members: [Element]) {
        self.members = members
        if members.count > Self.indexThreshold { self.indexPositions() }
    }

    private mutating func indexPositions() {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(self.members.count)
        for (position, member) in self.members.enumerated() { positions[member.key] = position }
        self.positions = positions
    }

    /// - Precondition: No key twice (as for a `Dictionary` literal).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = []
        self.members.reserveCapacity(elements.count)
        for (key, value) in elements {
            precondition(self[key] == nil, "JSONObject literal names the key '\(key)' twice")
            self[key] = value
        }
    }

    public var count: Int { self.members.count }
    public var isEmpty: Bool { self.members.isEmpty }
    /// The keys, in the object's order.
    public var keys: [String] { self.members.map(\.key) }
    /// The values, in the object's order.
    public var values: [JSONValue] { self.members.map(\.value) }
    /// The members as a dictionary.
    public var dictionary: [String: JSONValue] {
        Dictionary(self.members.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    public func makeIterator() -> IndexingIterator<[Element]> { self.members.makeIterator() }

    private func index(of key: String) -> Int? {
        if let positions = self.positions { return positions[key] }
        return self.members.firstIndex { Self.same($0.key, key) }
    }

    /// Whether two keys are the same, their lengths compared first: most keys of an object differ in length, and
    /// that is one comparison of two stored counts.
    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && a == b }

    /// The value of `key`; setting `nil` removes the member, setting a new key adds it at the end.
    public subscript(key: String) -> JSONValue? {
        get {
            if let positions = self.positions { return positions[key].map { self.members[$0].value } }
            for member in self.members where Self.same(member.key, key) { return member.value }
            return nil
        }
        set {
            if let index = self.index(of: key) {
                if let newValue {
                    self.members[index].value = newValue
                } else {
                    self.removeValue(forKey: key)
                }
            } else if let newValue {
                self.members.append((key: key, value: newValue))
                if self.positions != nil {
                    self.positions![key] = self.members.count - 1
                } else if self.members.count > Self.indexThreshold {
                    self.indexPositions()
                }
            }
        }
    }

    /// The value of `key`, or `defaultValue` if there is none.
    public subscript(key: String, default defaultValue: @autoclosure () -> JSONValue) -> JSONValue {
        self[key] ?? defaultValue()
    }

    /// Removes `key`'s member, returning its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let index = self.index(of: key) else { return nil }
        let value = self.members.remove(at: index).value
        if self.positions != nil {
            // The later members moved up by one.
            self.positions = nil
            if self.members.count > Self.indexThreshold { self.indexPositions() }
        }
        return value
    }

    /// The object with each value transformed, in the same order.
    public func mapValues<Failure: Error>(
        _ transform: (JSONValue) throws(Failure) -> JSONValue
    ) throws(Failure) -> JSONObject {
        var object = self
        for index in object.members.indices { object.members[index].value = try transform(object.members[index].value) }
        return object
    }

    /// The members sorted by key (how ``JSONValue/encoded()`` writes them).
    public var sortedMembers: [Element] {
        // Objects are often built in key order already: checked before sorting.
        if zip(self.members, self.members.dropFirst()).allSatisfy({ $0.key < $1.key }) { return self.members }
        return self.members.sorted { $0.key < $1.key }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        // In the same order (the usual case): one pass.
        if zip(lhs.members, rhs.members).allSatisfy({ $0.key == $1.key && $0.value == $1.value }) { return true }
        return lhs.members.allSatisfy { member in rhs[member.key] == member.value }
    }

    /// Independent of the members' order, as equality is.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for member in self.members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum &+= memberHasher.finalize()
        }
        hasher.combine(self.count)
        hasher.combine(sum)
    }
}

extension JSONObject: CustomStringConvertible {
    public var description: String {
        "[" + self.members.map { "\(String(reflecting: $0.key)): \($0.value)" }.joined(separator: ", ") + "]"
    }
}
