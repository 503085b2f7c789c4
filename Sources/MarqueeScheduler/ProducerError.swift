/// A failure of the producer that stops it.
public struct ProducerError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for the operator.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { self.reason }
}
