/// One HTTP header field.
///
/// Request headers are sent as given; response headers arrive with lowercased names. Header values can be
/// credentials (`Authorization: KakaoAK …`), so ``HTTPFetcher`` never logs them and ``description`` hides them.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The field name, e.g. `Authorization`.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The name only: values may be credentials.
    public var description: String { "\(self.name): <\(self.value.utf8.count) bytes>" }
}
