import class Foundation.JSONEncoder

/// The JSON documents `marquee` prints with `--json`: indented, keys sorted so the output is stable,
/// slashes unescaped, and empty arrays and objects written `[]` and `{}`.
public enum PrettyJSON {
    /// `value` as one indented JSON document (no line break after it).
    ///
    /// - Throws: What `value`'s encoding throws.
    public static func document(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: self.compactingEmptyContainers(try encoder.encode(value)), as: UTF8.self)
    }

    /// `[]` and `{}` for the `[\n\n]` and `{\n\n}` that Foundation's pretty printer writes for empty containers
    /// (outside strings: a string's line breaks are escaped, so only the printer's white space is touched).
    static func compactingEmptyContainers(_ json: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(json.count)
        var isInString = false
        var isEscaped = false
        var pendingSpace: [UInt8] = []  // white space after an opening bracket, held until we know what follows
        for byte in json {
            if isInString {
                output.append(byte)
                if isEscaped {
                    isEscaped = false
                } else if byte == UInt8(ascii: "\\") {
                    isEscaped = true
                } else if byte == UInt8(ascii: "\"") {
                    isInString = false
                }
                continue
            }
            let opensEmpty = output.last == UInt8(ascii: "[") || output.last == UInt8(ascii: "{")
            if opensEmpty, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                pendingSpace.append(byte)
                continue
            }
            let closesEmpty =
                (output.last == UInt8(ascii: "[") && byte == UInt8(ascii: "]"))
                || (output.last == UInt8(ascii: "{") && byte == UInt8(ascii: "}"))
            if !closesEmpty { output += pendingSpace }
            pendingSpace = []
            output.append(byte)
            if byte == UInt8(ascii: "\"") { isInString = true }
        }
        return output + pendingSpace
    }
}
