import Configuration

import struct Foundation.Data
import class Foundation.FileManager

/// The settings of one process, from four layers in order: flags, the environment, a settings file (`--config`,
/// else `MARQUEE_CONFIG`), then each setting's default. The layers are swift-configuration providers; a
/// setting's key is its name (`MARQUEE_BROKERS` is the key `marquee.brokers`), so the environment and the file
/// name it alike.
///
/// A secret may also come from a file: `<name>_FILE` names a file whose content, trimmed, is the value (Docker
/// and Kubernetes secrets). Within one layer, a setting and its `_FILE` may not both be set. An empty value counts
/// as unset.
public struct Settings: Sendable {
    private struct Layer: Sendable {
        let origin: SettingOrigin
        let provider: any ConfigProvider
    }

    /// The environment variable naming a settings file when no `--config` is given.
    public static let fileVariable = "MARQUEE_CONFIG"

    private let layers: [Layer]
    /// The settings file read, if any.
    public let settingsFile: String?

    /// Every setting at its default: no flag, no environment, no file.
    public static var defaults: Settings { Settings(layers: [], settingsFile: nil) }

    private init(layers: [Layer], settingsFile: String?) {
        self.layers = layers
        self.settingsFile = settingsFile
    }

    /// - Parameters:
    ///   - flags: Values given on the command line, by setting name; flags not given are absent.
    ///   - environment: The process's environment.
    ///   - settingsFile: The `--config` path; `nil`: `MARQUEE_CONFIG` from the environment, if set.
    /// - Throws: ``SettingError`` for a settings file that cannot be read or has a malformed line (with its number).
    public init(
        flags: [String: String] = [:],
        environment: [String: String],
        settingsFile: String? = nil
    ) throws(SettingError) {
        var layers = [
            Layer(
                origin: .flag,
                provider: InMemoryProvider(
                    name: "flags",
                    values: Dictionary(
                        uniqueKeysWithValues: flags.map {
                            (Self.key($0.key), ConfigValue(.string($0.value), isSecret: false))
                        }
                    )
                )
            ),
            Layer(origin: .environment, provider: EnvironmentVariablesProvider(environmentVariables: environment)),
        ]
        let path = settingsFile ?? environment[Self.fileVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let path {
            let lines = try SettingsFile.read(path)
            layers.append(
                Layer(origin: .settingsFile(path), provider: EnvironmentVariablesProvider(environmentVariables: lines))
            )
        }
        self.layers = layers
        self.settingsFile = path
    }

    /// The value of a setting, from the first layer that sets it, else its default.
    ///
    /// - Throws: ``SettingError`` naming the setting, where the value came from and the form it needs (a secret's
    ///   value is never shown).
    public func value<Value>(_ setting: Setting<Value>) throws(SettingError) -> Value {
        try self.resolved(setting).value
    }

    /// The value of a setting and where it came from.
    public func resolved<Value>(_ setting: Setting<Value>) throws(SettingError) -> (value: Value, origin: SettingOrigin)
    {
        guard let (text, origin) = try self.text(of: setting) else { return (setting.defaultValue, .defaultValue) }
        guard let value = setting.parse(text) else { throw SettingError(setting, text: text, origin: origin) }
        return (value, origin)
    }

    /// The text a setting was given and where, or `nil` when no layer sets it.
    public func text(of setting: some AnySetting) throws(SettingError) -> (String, SettingOrigin)? {
        for layer in self.layers {
            let direct = self.lookUp(setting.name, in: layer)
            let file = setting.isSecret && layer.origin != .flag ? self.lookUp(setting.name + "_FILE", in: layer) : nil
            switch (direct, file) {
            case (nil, nil):
                continue
            case (let text?, nil):
                return (text, layer.origin)
            case (nil, let path?):
                return (try Self.readSecret(path, for: setting), .secretFile(path))
            case (_?, _?):
                throw SettingError("\(setting.name) and \(setting.name)_FILE are both set in \(layer.origin): set one")
            }
        }
        return nil
    }

    /// The value of a setting made into what its reader needs by `transform`, whose error becomes a
    /// ``SettingError`` naming the setting and where its value came from.
    public func value<Value, Result>(
        _ setting: Setting<Value>,
        _ transform: (Value) throws -> Result
    ) throws(SettingError) -> Result {
        let (value, origin) = try self.resolved(setting)
        do {
            return try transform(value)
        } catch {
            let flag = setting.flag.map { " (--\($0))" } ?? ""
            throw SettingError("\(setting.name)\(flag) from \(origin): \(error)")
        }
    }

    /// The texts of the settings of `catalogue` that are set, by name, a secret's file read: for a reader that
    /// takes its settings as environment variables.
    public func texts(_ catalogue: [any AnySetting]) throws(SettingError) -> [String: String] {
        var texts: [String: String] = [:]
        for setting in catalogue {
            if let (text, _) = try self.text(of: setting) { texts[setting.name] = text }
        }
        return texts
    }

    /// The flags given, by setting name, from each setting and its flag's value (`nil`: not given).
    public static func flags(_ given: [(any AnySetting, String?)]) -> [String: String] {
        var flags: [String: String] = [:]
        for (setting, value) in given { if let value { flags[setting.name] = value } }
        return flags
    }

    /// Checks every setting of `catalogue` that is set, so a malformed one is refused at start whether or not this
    /// run reads it.
    public func validate(_ catalogue: [any AnySetting]) throws(SettingError) {
        for setting in catalogue {
            guard let (text, origin) = try self.text(of: setting) else { continue }
            if !setting.accepts(text) { throw SettingError(setting, text: text, origin: origin) }
        }
    }

    /// The effective settings, one line each (`NAME=value  # origin`), secrets redacted: what `--print-config`
    /// prints.
    public func printed(_ catalogue: [any AnySetting]) throws(SettingError) -> String {
        var lines: [String] = []
        if let file = self.settingsFile { lines.append("# settings file: \(file)") }
        for setting in catalogue {
            let (text, origin) = try self.text(of: setting) ?? (setting.defaultText, .defaultValue)
            let shown = setting.isSecret && origin != .defaultValue ? "<redacted>" : text
            lines.append("\(setting.name)=\(shown)  # \(origin.label)")
        }
        return lines.joined(separator: "\n")
    }

    private func lookUp(_ name: String, in layer: Layer) -> String? {
        guard let result = try? layer.provider.value(forKey: Self.key(name), type: .string),
            case .string(let text)? = result.value?.content
        else { return nil }
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The key of a setting name: `MARQUEE_BROKERS` is `marquee.brokers`, which the environment provider encodes
    /// back to the name.
    static func key(_ name: String) -> AbsoluteConfigKey {
        AbsoluteConfigKey(name.lowercased().split(separator: "_").map(String.init))
    }

    private static func readSecret(_ path: String, for setting: some AnySetting) throws(SettingError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingError("\(setting.name)_FILE: cannot read \(path)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        guard !text.isEmpty else { throw SettingError("\(setting.name)_FILE: \(path) is empty") }
        return text
    }
}

/// A settings file: `NAME=value` lines as a shell or compose `.env` file has them (`#` comments, blank lines,
/// an optional `export `, quotes around a value). Stricter than an `.env` reader that skips what it does not
/// understand: a malformed line is an error with its number.
public enum SettingsFile {
    public static func read(_ path: String) throws(SettingError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingError("cannot read the settings file \(path)")
        }
        return try self.parse(String(decoding: data, as: UTF8.self), path: path)
    }

    public static func parse(_ text: String, path: String) throws(SettingError) -> [String: String] {
        var settings: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine.trimmingWhitespace())
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count) }
            guard let equals = line.firstIndex(of: "="), equals > line.startIndex,
                line[..<equals].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            else {
                throw SettingError("\(path):\(index + 1): expected NAME=value")
            }
            var value = Substring(line[line.index(after: equals)...].trimmingWhitespace())
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            settings[String(line[..<equals])] = String(value)
        }
        return settings
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
