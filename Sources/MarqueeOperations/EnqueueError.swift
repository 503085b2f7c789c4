/// Flags that cannot make fetch jobs, in words for the operator (`marquee enqueue` shows them as usage errors).
public struct EnqueueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, naming the flag.
    public var description: String

    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}
