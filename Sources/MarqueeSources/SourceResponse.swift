/// An upstream's answer, as the HTTP layer received it.
public struct SourceResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, names lowercased.
    public var headers: [(name: String, value: String)]
    /// The body, decompressed.
    public var body: [UInt8]

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The headers; names are compared case-insensitively anyway.
    ///   - body: The body bytes.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return self.headers.first(where: { $0.name.lowercased() == lower })?.value
    }
}
