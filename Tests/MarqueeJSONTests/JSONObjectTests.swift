import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct JSONObjectTests {
    /// `count` members `k0`, `k1` … with the value of their number.
    static func numbered(_ count: Int) -> JSONObject {
        var object = JSONObject()
        for index in 0..<count { object["k\(index)"] = .integer(Int64(index)) }
        return object
    }

    @Test func keepsItsOrderAndEqualsInAnyOrder() {
        let ab: JSONObject = ["a": .integer(1), "b": .string("x")]
        let ba: JSONObject = ["b": .string("x"), "a": .integer(1)]
        #expect(ab.keys == ["a", "b"])
        #expect(ba.keys == ["b", "a"])
        #expect(ab == ba)
        #expect(ab.hashValue == ba.hashValue)
        #expect(Set([JSONValue.object(ab), .object(ba)]).count == 1)
        #expect(ab != ["a": .integer(1), "b": .string("y")])
        #expect(ab != ["a": .integer(1), "c": .string("x")])
        #expect(ab != ["a": .integer(1)])
        #expect(JSONObject(["b": .string("x"), "a": .integer(1)]).keys == ["a", "b"], "from a dictionary: by key")
        // Written with its keys sorted, whatever its order.
        #expect(String(decoding: JSONValue.object(ba).encoded(), as: UTF8.self) == #"{"a":1,"b":"x"}"#)
    }

    /// Past the threshold of linear lookups, the positions are kept through additions, changes and removals.
    @Test(arguments: [5, 33, 200])
    func findsSetsAndRemovesMembers(count: Int) {
        var object = Self.numbered(count)
        #expect(object.count == count)
        #expect((0..<count).allSatisfy { object["k\($0)"] == .integer(Int64($0)) })
        #expect(object["missing"] == nil)

        object["k0"] = .string("changed")
        #expect(object.count == count, "a change adds nothing")
        #expect(object.keys.first == "k0", "and keeps the member's place")
        #expect(object.removeValue(forKey: "k1") == .integer(1))
        object["k2"] = nil
        #expect(object.removeValue(forKey: "k1") == nil)
        #expect(object.count == count - 2)
        #expect(object["k0"] == .string("changed"))
        #expect(object["k1"] == nil && object["k2"] == nil)
        #expect((3..<count).allSatisfy { object["k\($0)"] == .integer(Int64($0)) }, "the later members moved up")
        object["new"] = .null
        #expect(object["new"] == .null)
        #expect(object.keys.last == "new")
        #expect(object.dictionary.count == count - 1)

        var reversed = JSONObject()
        for member in object.members.reversed() { reversed[member.key] = member.value }
        #expect(reversed == object, "the same members in another order")
        reversed["k3"] = .bool(true)
        #expect(reversed != object)
    }

    @Test func mapsValuesInPlace() {
        let object: JSONObject = ["b": .integer(2), "a": .integer(1)]
        #expect(object.mapValues { _ in .null } == ["b": .null, "a": .null])
        #expect(object.mapValues { _ in .null }.keys == ["b", "a"])
        struct Refused: Error {}
        #expect(throws: Refused.self) { try object.mapValues { (_) throws(Refused) -> JSONValue in throw Refused() } }
    }

    /// A key named twice keeps its last value in its first place, or refuses a payload; a set finds the repeats of
    /// a large object.
    @Test(arguments: [3, 40, 5000])
    func readsRepeatedKeys(count: Int) throws {
        let members = (0..<count).map { #""k\#($0)":\#($0)"# }
        let text = "{" + (members + [#""k1":"again""#]).joined(separator: ",") + "}"
        let object = try #require(JSONDocument.parse(Array(text.utf8)))
        guard case .object(let read) = object else {
            Issue.record("not an object: \(object)")
            return
        }
        #expect(read.count == count)
        #expect(read["k1"] == .string("again"))
        #expect(read.keys[1] == "k1")
        #expect(read["k\(count - 1)"] == .integer(Int64(count - 1)))
        #expect(JSONDocument.parse(Array(text.utf8), refusesDuplicateKeys: true) == nil)
        #expect(throws: PayloadError.self) { try JSONValue.parse(Array(text.utf8)) }
        let unique = "{" + members.joined(separator: ",") + "}"
        #expect(JSONDocument.parse(Array(unique.utf8), refusesDuplicateKeys: true) == .object(Self.numbered(count)))
    }
}
