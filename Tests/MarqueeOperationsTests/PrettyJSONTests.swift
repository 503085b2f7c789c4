import MarqueeOperations
import Testing

@Suite struct PrettyJSONTests {
    struct Document: Encodable {
        var name = "a/b"
        var list: [Int] = []
        var object: [String: String] = [:]
        var text = "[\n\n]"
    }

    @Test func keysAreSortedAndEmptyContainersStayOnOneLine() throws {
        let json = try PrettyJSON.document(Document())
        #expect(json.contains("\"list\" : [],"))
        #expect(json.contains("\"object\" : {},"))
        #expect(json.contains("\"name\" : \"a/b\","))
        #expect(json.contains(#""text" : "[\n\n]""#))
        let keys = ["list", "name", "object", "text"].map { json.firstRange(of: "\"\($0)\"")!.lowerBound }
        #expect(keys == keys.sorted())
        #expect(try PrettyJSON.document([[Int]]()) == "[]")
    }
}
