import class Foundation.FileHandle

enum FileHandleOutput {
    static func standardError(_ text: String) {
        FileHandle.standardError.write(Array(text.utf8).withUnsafeBytes { .init($0) })
    }
}
