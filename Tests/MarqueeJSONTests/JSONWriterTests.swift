import MarqueeCore
import MarqueeJSON
import Testing

@Suite struct JSONWriterTests {
    /// Every kind of member, in key order, against the same object built as a `JSONObject` and encoded.
    @Test func writesTheBytesTheEquivalentObjectEncodesTo() throws {
        var writer = JSONWriter.object(capacity: 8)
        writer.write("a_null_string", nil as String?)
        writer.write("array_of_ints", [Int64(3), -1, .max])
        writer.write("array_of_strings", ["x", "quote \" and \\ and\nnewline", "é 東京"])
        writer.write("b_bool", true)
        writer.write("c_double", 6.5)
        writer.write("c_double_integral", 7.0)
        writer.write("empty_arrays", [Int64]())
        writer.write("f_false", false)
        writer.write("int", Int64.min)
        writer.write("null_bool", nil as Bool?)
        writer.write("null_double", nil as Double?)
        writer.write("null_int", nil as Int64?)
        writer.write("string", "tab\there, control \u{01}, slash /")
        writer.endObject()
        let written = writer.finish()

        let object: JSONObject = [
            "string": .string("tab\there, control \u{01}, slash /"),
            "null_int": .null, "null_double": .null, "null_bool": .null,
            "int": .integer(.min), "f_false": .bool(false), "empty_arrays": .array([]),
            "c_double_integral": .number(7), "c_double": .number(6.5), "b_bool": .bool(true),
            "array_of_strings": .array([.string("x"), .string("quote \" and \\ and\nnewline"), .string("é 東京")]),
            "array_of_ints": .array([.integer(3), .integer(-1), .integer(.max)]),
            "a_null_string": .null,
        ]
        #expect(
            String(decoding: written, as: UTF8.self)
                == String(decoding: JSONValue.object(object).encoded(), as: UTF8.self)
        )
        #expect(try JSONValue.parse(written) == .object(object))
    }

    @Test func anEmptyObjectIsBraces() {
        var writer = JSONWriter.object()
        writer.endObject()
        #expect(writer.finish() == Array("{}".utf8))
    }

    /// Values one after the other, nested, with the commas where they belong.
    @Test func separatesValuesInNestedContainers() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.write(integer: 1)
        writer.writeNull()
        writer.beginObject()
        writer.key("b")
        writer.write(bool: false)
        writer.endObject()
        writer.endArray()
        writer.key("c")
        writer.write(string: "x")
        writer.endObject()
        writer.write(number: 0.5)
        writer.endArray()
        #expect(String(decoding: writer.finish(), as: UTF8.self) == #"[{},[],{"a":[1,null,{"b":false}],"c":"x"},0.5]"#)
    }

    /// A value's objects are written with their keys sorted, or in their own order when the writer keeps it (the
    /// emulator's bodies, log lines).
    @Test func writesAnObjectsKeysSortedOrAsGiven() {
        let value = JSONValue.object(["b": .integer(1), "a": .object(["z": .null, "y": .bool(true)]), "é": .array([])])
        var sorted = JSONWriter()
        sorted.write(value)
        #expect(String(decoding: sorted.finish(), as: UTF8.self) == #"{"a":{"y":true,"z":null},"b":1,"é":[]}"#)
        #expect(value.encoded() == Array(#"{"a":{"y":true,"z":null},"b":1,"é":[]}"#.utf8))
        var asGiven = JSONWriter(keyOrder: .asGiven)
        asGiven.write(value)
        #expect(String(decoding: asGiven.finish(), as: UTF8.self) == #"{"b":1,"a":{"z":null,"y":true},"é":[]}"#)
        var byHand = JSONWriter(keyOrder: .asGiven)
        byHand.beginObject()
        byHand.key("ts")
        byHand.write(string: "now")
        byHand.key("level" as String)
        byHand.write(string: "info")
        byHand.endObject()
        #expect(String(decoding: byHand.finish(), as: UTF8.self) == #"{"ts":"now","level":"info"}"#)
    }

    /// DEL is written as it is, or escaped for a terminal; every other escape is the same either way.
    @Test func escapesDeleteOnlyWhenAsked() {
        let text = "a\u{01}b\u{7F}c\\d\"e\n"
        var plain = JSONWriter()
        plain.write(string: text)
        #expect(plain.finish() == Array("\"a\\u0001b\u{7F}c\\\\d\\\"e\\n\"".utf8))
        var forTerminal = JSONWriter(escapesDelete: true)
        forTerminal.write(string: text)
        #expect(String(decoding: forTerminal.finish(), as: UTF8.self) == #""a\u0001b\u007fc\\d\"e\n""#)
    }

    /// Numbers JSON cannot hold are written as `null`.
    @Test func writesNonFiniteNumbersAsNull() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.write(number: .nan)
        writer.write(number: .infinity)
        writer.write(number: 1e-5)
        writer.write(integer: .min)
        writer.endArray()
        #expect(String(decoding: writer.finish(), as: UTF8.self) == "[null,null,1e-05,-9223372036854775808]")
    }

    #if DEBUG
    /// Keys out of order (or twice) would write an object other than the one meant: assertions stop it.
    @Test func aKeyOutOfOrderStopsABuildWithAssertions() async {
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter.object()
            writer.write("title", "x")
            writer.write("movie_id", Int64(1))
        }
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter.object()
            writer.write("title", "x")
            writer.write("title", "y")
        }
    }
    #endif
}
