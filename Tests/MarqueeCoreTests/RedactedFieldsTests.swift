import MarqueeCore
import Testing

@Suite struct RedactedFieldsTests {
    private struct Key: CustomReflectable {
        var id = "AKIAEXAMPLE"
        var secret = "wJalrXUtnFEMI"
        var token: String?
        var fields: RedactedFields {
            RedactedFields("Key", shown: [("id", self.id)], secrets: [("secret", true), ("token", self.token != nil)])
        }
        var customMirror: Mirror { self.fields.mirror(of: self) }
    }

    @Test func secretsAreRedactedAndAnUnsetOneIsLeftOutOfTheText() {
        #expect(Key().fields.description == "Key(id: AKIAEXAMPLE, secret: REDACTED)")
        #expect(Key(token: "tok").fields.description == "Key(id: AKIAEXAMPLE, secret: REDACTED, token: REDACTED)")
    }

    @Test func theMirrorShowsNoSecret() {
        var dumped = ""
        dump(Key(token: "tok-123"), to: &dumped)
        #expect(!dumped.contains("wJalrXUtnFEMI") && !dumped.contains("tok-123"))
        #expect(dumped.contains("AKIAEXAMPLE"))
        let labels = Mirror(reflecting: Key()).children.map { "\($0.label ?? "?")=\($0.value)" }
        #expect(labels == ["id=AKIAEXAMPLE", "secret=REDACTED", "token=nil"])
    }
}
