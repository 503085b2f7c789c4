/// An error that says whether the same work may succeed when tried again.
///
/// Each module's error type conforms (``PayloadError``, `SourceError`, `HTTPFetchError`, `KafkaError`,
/// `StoreError`, `ImageStoreError`, `ImagingError`, `SchedulerError`), so the stage routes a failed job by this
/// alone: a retriable error sends the job to a retry tier, any other to the dead-letter topic.
public protocol RetriableError: Error, CustomStringConvertible {
    /// Whether trying the same work again later can help (an outage, a timeout, a conflict), rather than
    /// failing the same way (refused data, a missing resource, a malformed answer).
    var isRetriable: Bool { get }
}
