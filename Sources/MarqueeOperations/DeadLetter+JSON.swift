import MarqueeCore
public import MarqueeJSON
import MarqueeKafka

import struct Foundation.Data

// MARK: - DeadLetter + JSON

extension DeadLetter {
    /// The letter as a JSON object with snake_case keys: one line of `marquee dlq list --json`, and what a
    /// dashboard serves.
    ///
    /// Keys: `id`, `stage`, `topic`, `partition`, `offset`, `kind`, `error_kind`, `error`, `attempt`, `origin`,
    /// `job_id`, `root`, `parent`, `key`, `time` (ISO 8601, UTC), `timestamp_ms`, `age_seconds`, `purged`,
    /// `poison` (`null` where a fact is missing). With `includingContent`, also `headers` (an array of
    /// `{"name", "value"}` in record order) and the payload: `payload` (the JSON itself) when it is JSON, else
    /// `payload_text` when it is UTF-8 text, else `payload_base64`.
    ///
    /// - Parameters:
    ///   - nowMilliseconds: Now, for `age_seconds`.
    ///   - includingContent: Whether to add the headers and the payload.
    public func json(nowMilliseconds: Int64, includingContent: Bool = false) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        var object: JSONObject = [
            "id": .string(self.id.description),
            "stage": .string(self.id.stage),
            "topic": .string(self.record.topic),
            "partition": .integer(Int64(self.id.partition)),
            "offset": .integer(self.id.offset),
            "kind": .string(self.kind),
            "error_kind": .string(self.errorKind),
            "error": text(self.error),
            "attempt": self.attempt.map { .integer(Int64($0)) } ?? .null,
            "origin": text(self.origin),
            "job_id": text(self.jobID),
            "root": text(self.root),
            "parent": text(self.parent),
            "key": text(self.record.keyString),
            "time": text(self.timestamp.map(DeadLetterFilter.format(milliseconds:))),
            "timestamp_ms": self.timestamp.map(JSONValue.integer) ?? .null,
            "age_seconds": self.age(nowMilliseconds: nowMilliseconds).map { .integer($0 / 1000) } ?? .null,
            "purged": .bool(self.isPurged),
            "poison": .bool(self.isPoison),
        ]
        if includingContent {
            object["headers"] = .array(
                self.record.headers.map { .object(["name": .string($0.key), "value": text($0.stringValue)]) }
            )
            if let payload = try? JSONValue.parse(self.record.value) {
                object["payload"] = payload
            } else if let payload = String(validating: self.record.value, as: UTF8.self) {
                object["payload_text"] = .string(payload)
            } else {
                object["payload_base64"] = .string(Data(self.record.value).base64EncodedString())
            }
        }
        return .object(object)
    }
}
