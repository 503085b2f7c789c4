/// What a client shows while a variant loads: a flat colour and a blurred preview.
public struct ImagePlaceholder: Sendable, Hashable {
    /// The image's average colour (computed in linear light, as BlurHash's DC term), `#rrggbb` in lower case.
    /// Transparent areas count as white.
    public var dominantColor: String
    /// A BlurHash (<https://blurha.sh>) with 4 × 3 components: 28 characters of its base-83 alphabet.
    public var blurHash: String

    /// Creates a placeholder.
    public init(dominantColor: String, blurHash: String) {
        self.dominantColor = dominantColor
        self.blurHash = blurHash
    }
}
