public import MarqueeCore

/// An error raised by ``ImageProcessor``: the input was refused or could not be processed.
///
/// Every refusal is permanent (``isRetriable`` is `false`): the same bytes fail the same way, so the image
/// worker sends them to its dead-letter topic with ``code`` and ``reason`` (which is written for that purpose:
/// what was refused and why, e.g. "refused: 50000×50000 pixels is over the cap of 50000000").
public struct ImagingError: RetriableError, Sendable {
    /// The kind of an ``ImagingError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case empty
            case tooLarge
            case tooManyPixels
            case unsupportedType
            case svg
            case corrupt
            case invalidConfiguration
            case shutdown
            case `internal`
        }

        fileprivate let value: Value

        /// The input has zero bytes.
        public static let empty = Code(value: .empty)
        /// The input has more bytes than ``ImagingConfiguration/maxBytes``.
        public static let tooLarge = Code(value: .tooLarge)
        /// The header declares more pixels than ``ImagingConfiguration/maxPixels`` (a decompression bomb, or just
        /// too big); refused before any decode.
        public static let tooManyPixels = Code(value: .tooManyPixels)
        /// Not JPEG, PNG, WebP or GIF by its magic bytes: HTML, JSON, PDF, TIFF, HEIF, random bytes …
        public static let unsupportedType = Code(value: .unsupportedType)
        /// An SVG or other XML document: never rendered (scripts, external references, unbounded cost).
        public static let svg = Code(value: .svg)
        /// The magic bytes name an accepted format, but the header or the data is broken or truncated.
        public static let corrupt = Code(value: .corrupt)
        /// An ``ImagingConfiguration`` value is out of range.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The processor was shut down before the image was processed.
        public static let shutdown = Code(value: .shutdown)
        /// libvips failed for another reason (initialisation, out of memory, an encoder error).
        public static let `internal` = Code(value: .internal)

        public var description: String {
            switch self.value {
            case .empty: "empty"
            case .tooLarge: "tooLarge"
            case .tooManyPixels: "tooManyPixels"
            case .unsupportedType: "unsupportedType"
            case .svg: "svg"
            case .corrupt: "corrupt"
            case .invalidConfiguration: "invalidConfiguration"
            case .shutdown: "shutdown"
            case .internal: "internal"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What was refused and why, for an operator and the dead-letter headers.
    public var reason: String
    /// The error this one wraps, if any.
    public var underlying: (any Error)?
    /// Where the error was raised.
    public var file: String
    /// Where the error was raised.
    public var line: Int

    /// Whether the same input may succeed later: never. Refusals and decode failures depend only on the bytes;
    /// ``Code/shutdown`` means the work was abandoned, not failed.
    public var isRetriable: Bool { false }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What was refused and why.
    ///   - underlying: The wrapped error, if any.
    public init(
        code: Code,
        reason: String,
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    public var description: String { "ImagingError.\(self.code): \(self.reason)" }
}
