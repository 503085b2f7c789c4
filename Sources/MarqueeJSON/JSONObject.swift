/// A JSON object: its members in the order they were read or added, each key once.
///
/// An array of pairs rather than a `Dictionary`: the objects a stage reads and writes have a few dozen members
/// at most, looked up a handful of times each, and a dictionary hashes every key on the way in, again on every
/// lookup, and costs more to build and to free. A lookup compares keys one by one instead, up to
/// ``indexThreshold`` members; a larger object (a hostile payload, say) also keeps a dictionary of its keys'
/// positions, so no lookup, insertion or comparison becomes quadratic.
///
/// Two objects are equal when they hold the same keys with equal values, in any order (as JSON objects are);
/// ``JSONValue/encoded()`` writes the keys sorted either way (``JSONWriter/KeyOrder/asGiven`` keeps this order).
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

    /// The members of a dictionary, in the order of their keys.
    public init(_ dictionary: [String: JSONValue]) {
        self.init(uniqueMembers: dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
    }

    /// Members known to name each key once (the reader's, after its duplicate check), with their places when the
    /// reader already has them.
    init(uniqueMembers members: [Element], positions: [String: Int]? = nil) {
        self.members = members
        if members.count > Self.indexThreshold { self.positions = positions ?? Self.positions(of: members) }
    }

    /// Each key's place in `members`.
    static func positions(of members: [Element]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.key, $0) })
    }

    /// - Precondition: No key twice (as for a `Dictionary` literal).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = []
        self.members.reserveCapacity(elements.count)
        for (key, value) in elements {
            precondition(self.index(of: key) == nil, "JSONObject literal names the key '\(key)' twice")
            self.append(key, value)
        }
    }

    public var count: Int { self.members.count }
    public var isEmpty: Bool { self.members.isEmpty }
    /// The keys, in the object's order.
    public var keys: [String] { self.members.map(\.key) }
    /// The members as a dictionary.
    public var dictionary: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: self.members.lazy.map { ($0.key, $0.value) })
    }

    public func makeIterator() -> IndexingIterator<[Element]> { self.members.makeIterator() }

    /// The place of `key` in ``members``; `nil` if the object does not hold it.
    public func index(of key: String) -> Int? {
        if let positions = self.positions { return positions[key] }
        return self.members.firstIndex { Self.same($0.key, key) }
    }

    /// Whether two keys are the same, their lengths compared first: most keys of an object differ in length, and
    /// that is one comparison of two stored counts.
    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && a == b }

    /// The value of `key`; setting `nil` removes the member, setting a new key adds it at the end.
    public subscript(key: String) -> JSONValue? {
        get { self.index(of: key).map { self.members[$0].value } }
        set {
            if let index = self.index(of: key) {
                if let newValue {
                    self.members[index].value = newValue
                } else {
                    self.removeValue(forKey: key)
                }
            } else if let newValue {
                self.append(key, newValue)
            }
        }
    }

    /// Adds a member whose key the object does not hold yet.
    private mutating func append(_ key: String, _ value: JSONValue) {
        self.members.append((key: key, value: value))
        if self.positions != nil {
            self.positions![key] = self.members.count - 1
        } else if self.members.count > Self.indexThreshold {
            self.positions = Self.positions(of: self.members)
        }
    }

    /// Removes `key`'s member, returning its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let index = self.index(of: key) else { return nil }
        let value = self.members.remove(at: index).value
        if self.positions != nil {
            // The later members moved up by one.
            self.positions = self.members.count > Self.indexThreshold ? Self.positions(of: self.members) : nil
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
