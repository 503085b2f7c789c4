import MarqueeCore
import MarqueeJSON
import MarqueeKafka

// MARK: - DeadLetter + text for people

extension DeadLetter {
    /// What a payload is, read for a person.
    public enum PayloadForm: String, Sendable, Hashable {
        /// UTF-8 JSON.
        case json
        /// UTF-8 text that is not JSON.
        case text
        /// Bytes that are not UTF-8.
        case binary
    }

    /// Whether the payload is JSON, other text, or bytes that are not UTF-8.
    public var payloadForm: PayloadForm {
        if (try? JSONValue.parse(self.record.value)) != nil { return .json }
        return String(validating: self.record.value, as: UTF8.self) == nil ? .binary : .text
    }

    /// The payload for a person to read: JSON re-indented (``indentedJSON(_:)``), anything else escaped onto one
    /// line (``escaped(_:)``). The exact bytes are ``record``'s `value`.
    public var readablePayload: String {
        self.payloadForm == .json ? Self.indentedJSON(self.record.value) : Self.escaped(self.record.value)
    }

    /// Bytes as one printable line: UTF-8 text with control characters escaped (`\n`, `\t`, `\u{1b}` …), or, when
    /// the bytes are not UTF-8, ASCII with every other byte as `\xNN`. Backslashes are doubled.
    public static func escaped(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) {
            var result = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\": result += "\\\\"
                case "\n": result += "\\n"
                case "\r": result += "\\r"
                case "\t": result += "\\t"
                default:
                    if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) {
                        result += "\\u{\(String(scalar.value, radix: 16))}"
                    } else {
                        result.unicodeScalars.append(scalar)
                    }
                }
            }
            return result
        }
        var result = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): result += "\\\\"
            case UInt8(ascii: "\n"): result += "\\n"
            case UInt8(ascii: "\r"): result += "\\r"
            case UInt8(ascii: "\t"): result += "\\t"
            case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    /// Valid JSON re-indented by two spaces, keys in their original order and strings exactly as written.
    public static func indentedJSON(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var depth = 0
        var inString = false
        var escaping = false
        var index = 0
        func newline() {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                output.append(byte)
                if escaping {
                    escaping = false
                } else if byte == UInt8(ascii: "\\") {
                    escaping = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                continue
            case UInt8(ascii: "\""):
                inString = true
                output.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                // An empty object or array stays on one line.
                var next = index
                while next < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: "}") || bytes[next] == UInt8(ascii: "]") {
                    output.append(bytes[next])
                    index = next + 1
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
            case UInt8(ascii: ":"):
                output.append(contentsOf: ": ".utf8)
            default:
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

// MARK: - DeadLetter + its facts for people

extension DeadLetter {
    /// What `marquee dlq show` prints: the letter's facts (id, topic, kind, error, attempts, lineage, key, time,
    /// whether purged), every header, and the payload (``readablePayload``) with its size and form.
    ///
    /// - Parameter nowMilliseconds: Now, for the letter's age.
    public func details(nowMilliseconds: Int64) -> String {
        var facts = TextTable([.init(header: ""), .init(header: "", maxWidth: 10_000)])
        let time = self.timestamp.map { DeadLetterFilter.format(milliseconds: $0) } ?? "-"
        let age = self.age(nowMilliseconds: nowMilliseconds).map { " (\(TextFormat.age(milliseconds: $0)) ago)" } ?? ""
        for (name, value) in [
            ("id", self.id.description),
            ("topic", "\(self.record.topic), partition \(self.id.partition), offset \(self.id.offset)"),
            ("kind", self.kind), ("error kind", self.errorKind), ("error", self.error ?? "-"),
            ("attempts", self.attempt.map { String($0) } ?? "-"), ("origin", self.origin ?? "-"),
            ("job", self.jobID ?? "-"), ("root", self.root ?? "-"), ("parent", self.parent ?? "-"),
            ("key", self.readableKey), ("time", time + age),
            ("purged", self.isPurged ? "yes" : "no"),
        ] {
            facts.append([name, value])
        }
        var lines = [facts.render(showingHeader: false), "", "headers (\(self.record.headers.count)):"]
        for header in self.record.headers {
            lines.append("  \(header.key): \(header.value.map { Self.escaped($0) } ?? "(no value)")")
        }
        let form =
            switch self.payloadForm {
            case .json: "JSON"
            case .text: "text, not JSON"
            case .binary: "not UTF-8, escaped"
            }
        lines += ["", "payload (\(self.record.value.count) bytes, \(form)):", self.readablePayload]
        return lines.joined(separator: "\n")
    }

    /// The record's key as one printable line (``escaped(_:)``), or `-` for none.
    public var readableKey: String { self.record.key.map { Self.escaped($0) } ?? "-" }
}

// MARK: - DeadLetterID + lists for people

extension DeadLetterID {
    /// `fetch/0/1, fetch/0/2`: the first five ids, and `, …` when there are more.
    public static func firstFive(_ ids: [DeadLetterID]) -> String {
        ids.prefix(5).map(\.description).joined(separator: ", ") + (ids.count > 5 ? ", …" : "")
    }
}
