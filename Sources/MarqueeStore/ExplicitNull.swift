/// An optional field that a JSON document shows as `null` when it is absent, where the synthesized `Encodable`
/// would leave its key out: the query results print every field they have (docs/query.md), so a script sees
/// `"poster_path": null` rather than no key. Decoding accepts both forms.
@propertyWrapper
public struct ExplicitNull<Value: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key is an absent value, as for a plain optional.
    public func decode<Value>(_: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        ExplicitNull(wrappedValue: try self.decodeIfPresent(Value.self, forKey: key))
    }
}
