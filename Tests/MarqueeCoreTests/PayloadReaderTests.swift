import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct PayloadReaderTests {
    /// k00 … k99.
    private func key(_ index: Int) -> String { index < 10 ? "k0\(index)" : "k\(index)" }

    /// An object of `count` integer members named k00, k01, … (in reverse order, so that key order and the
    /// members' order differ).
    private func object(_ count: Int) -> JSONValue {
        var object = JSONObject()
        for index in (0..<count).reversed() { object[self.key(index)] = .integer(Int64(index)) }
        return .object(object)
    }

    // Up to 64 members the reader marks what was read by place; past that by key: both ends of each way.
    @Test(arguments: [1, 2, 63, 64, 65, 100])
    func everyMemberReadFinishesAndAnUnreadOneIsNamed(count: Int) throws {
        let keys = (0..<count).map(self.key)
        var all = try PayloadReader(self.object(count), path: "data")
        for key in keys { _ = try all.optionalInt(key, in: 0...1000) }
        try all.finish()

        // Every member but two: the first unread in key order is named, whatever the members' order.
        guard count >= 2 else { return }
        let unread = [keys[count / 2], keys[count - 1]]
        var some = try PayloadReader(self.object(count), path: "data")
        for key in keys where !unread.contains(key) { _ = try some.optionalInt(key, in: 0...1000) }
        let error = try #require(throws: PayloadError.self) { try some.finish() }
        #expect(error.code == .unknownField)
        #expect(error.field == "data.\(unread[0])")
    }

    @Test func ignoredAndAbsentKeysCountAsRead() throws {
        var reader = try PayloadReader(self.object(3))
        reader.ignore("k00", "k01", "missing")
        #expect(try reader.optionalInt("k02", in: 0...10) == 2)
        #expect(try reader.optionalInt("absent", in: 0...10) == nil)
        try reader.finish()
        // A null member is read as absent, and still counts as read.
        var nulls = try PayloadReader(.object(["a": .null, "b": .integer(1)]))
        #expect(try nulls.optionalInt("a", in: 0...10) == nil)
        let unread = try #require(throws: PayloadError.self) { try nulls.finish() }
        #expect(unread.field == "b")
    }
}
