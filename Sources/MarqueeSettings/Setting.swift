/// One setting, declared once: its name (the environment variable and the settings file's name alike), its flag,
/// its type (what `parse` makes of the text), its default, and the help that `--help`, `--print-config` and
/// docs/configuration.md show.
public struct Setting<Value: Sendable>: AnySetting {
    public let name: String
    public let flag: String?
    public let summary: String
    /// The form a value must have, in words, with an example: "a duration such as 10s (1s to 1h)".
    public let expected: String
    public let defaultValue: Value
    public let defaultText: String
    public let isSecret: Bool
    public let readers: String
    private let parser: @Sendable (String) -> Value?

    /// - Parameters:
    ///   - name: The environment variable, also the name in a settings file.
    ///   - flag: The long flag without its dashes, if the setting has one.
    ///   - readers: Which executables read it, for the table ("workers", "marquee", "marquee-fetch" …).
    ///   - isSecret: Never printed; may also come from a file named by `<name>_FILE`.
    ///   - parse: The value of a text, or `nil` when the text does not have the ``expected`` form.
    public init(
        _ name: String,
        flag: String? = nil,
        readers: String,
        summary: String,
        expected: String,
        default defaultValue: Value,
        defaultText: String,
        isSecret: Bool = false,
        parse: @escaping @Sendable (String) -> Value?
    ) {
        self.name = name
        self.flag = flag
        self.readers = readers
        self.summary = summary
        self.expected = expected
        self.defaultValue = defaultValue
        self.defaultText = defaultText
        self.isSecret = isSecret
        self.parser = parse
    }

    /// The value of `text`, or `nil` when it does not have the expected form.
    public func parse(_ text: String) -> Value? { self.parser(text) }

    public func accepts(_ text: String) -> Bool { self.parser(text) != nil }
}

/// What every setting says of itself, whatever its type: for the tables and `--print-config`.
public protocol AnySetting: Sendable {
    var name: String { get }
    var flag: String? { get }
    var summary: String { get }
    var expected: String { get }
    var defaultText: String { get }
    var isSecret: Bool { get }
    var readers: String { get }
    func accepts(_ text: String) -> Bool
}

extension AnySetting {
    /// The discussion under its flag's help: the environment variable and the default.
    public var flagDiscussion: String {
        "Env: \(self.name)\(self.isSecret ? " or \(self.name)_FILE" : "") (default: \(self.defaultText))."
    }
}

/// A setting that cannot be used: which one, where its value came from, and the form it needs.
public struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    init(_ setting: some AnySetting, text: String, origin: SettingOrigin) {
        let shown = setting.isSecret ? "" : " '\(text)'"
        let flag = setting.flag.map { " (--\($0))" } ?? ""
        self.description = "\(setting.name)\(flag)\(shown) from \(origin): expected \(setting.expected)"
    }
}

/// Where a setting's value came from.
public enum SettingOrigin: Sendable, Hashable, CustomStringConvertible {
    case flag
    case environment
    case settingsFile(String)
    /// The file `<name>_FILE` named (secrets).
    case secretFile(String)
    case defaultValue

    public var description: String {
        switch self {
        case .flag: "the command line"
        case .environment: "the environment"
        case .settingsFile(let path): "the settings file \(path)"
        case .secretFile(let path): "the file \(path)"
        case .defaultValue: "the default"
        }
    }

    /// A short word for `--print-config`'s source column.
    public var label: String {
        switch self {
        case .flag: "flag"
        case .environment: "env"
        case .settingsFile: "file"
        case .secretFile: "secret file"
        case .defaultValue: "default"
        }
    }
}
