import MarqueeOperations

/// Prints `value` as one JSON document (``PrettyJSON``: indented, keys sorted so the output is stable).
func printJSON(_ value: some Encodable) throws {
    print(try PrettyJSON.document(value))
}
