import Foundation
import MarqueeSettings
import Testing

@Suite struct SettingsTests {
    /// A settings file in a fresh temporary folder.
    private func file(_ text: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("marquee.env").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault() throws {
        let path = try self.file("MARQUEE_BROKERS=file:9092\nMARQUEE_TOPIC_PREFIX=file.\nMARQUEE_CONCURRENCY=3\n")
        let settings = try Settings(
            flags: ["MARQUEE_BROKERS": "flag:9092"],
            environment: ["MARQUEE_BROKERS": "env:9092", "MARQUEE_TOPIC_PREFIX": "env."],
            settingsFile: path
        )
        #expect(try settings.resolved(Catalogue.brokers) == ("flag:9092", .flag))
        #expect(try settings.resolved(Catalogue.topicPrefix) == ("env.", .environment))
        #expect(try settings.resolved(Catalogue.concurrency) == (3, .settingsFile(path)))
        #expect(try settings.resolved(Catalogue.sessionTimeout) == (.seconds(10), .defaultValue))
    }

    @Test func theSettingsFileComesFromMarqueeConfigWhenNoneIsGiven() throws {
        let path = try self.file("export MARQUEE_STORE_TIMEOUT=\"7\"\n# a comment\n\nMARQUEE_LOG_LEVEL='debug'\n")
        let settings = try Settings(environment: ["MARQUEE_CONFIG": path])
        #expect(settings.settingsFile == path)
        #expect(try settings.value(Catalogue.storeTimeout) == 7)
        #expect(try settings.value(Catalogue.logLevel) == "debug")
    }

    @Test func anEmptyValueCountsAsUnset() throws {
        let settings = try Settings(environment: ["MARQUEE_TOPIC_PREFIX": "  "])
        #expect(try settings.resolved(Catalogue.topicPrefix) == ("marquee.", .defaultValue))
    }

    @Test(arguments: [
        (
            "MARQUEE_SESSION_TIMEOUT", "500ms",
            "MARQUEE_SESSION_TIMEOUT (--session-timeout) '500ms' from the environment: expected a duration from 1s to 1h, such as 10s"
        ),
        (
            "MARQUEE_CONCURRENCY", "many",
            "MARQUEE_CONCURRENCY (--concurrency) 'many' from the environment: expected a whole number from 0 to 100000"
        ),
        (
            "MARQUEE_BROKERS", "kafka",
            "MARQUEE_BROKERS (--brokers) 'kafka' from the environment: expected host:port, comma-separated"
        ),
        ("MARQUEE_RETRY_DELAYS", "10s,soon", "'10s,soon' from the environment: expected 1 to 10 durations above zero"),
        ("MARQUEE_LOG_LEVEL", "loud", "expected one of trace, debug, info"),
        (
            "MARQUEE_TOPIC_PARTITIONS", "0",
            "MARQUEE_TOPIC_PARTITIONS '0' from the environment: expected a whole number from 1 to 10000"
        ),
    ])
    func aMalformedValueIsRefusedWithItsNameOriginAndForm(name: String, value: String, message: String) throws {
        let settings = try Settings(environment: [name: value])
        #expect {
            try settings.validate(Catalogue.all)
        } throws: { error in
            (error as? SettingError)?.description.contains(message) == true
        }
    }

    @Test func aMalformedValueInTheFileNamesTheFile() throws {
        let path = try self.file("MARQUEE_STORE_TIMEOUT=0\n")
        let settings = try Settings(environment: [:], settingsFile: path)
        let error = #expect(throws: SettingError.self) { try settings.value(Catalogue.storeTimeout) }
        #expect(
            error?.description
                == "MARQUEE_STORE_TIMEOUT (--store-timeout) '0' from the settings file \(path): expected a whole number of seconds from 1 to 3600"
        )
    }

    @Test func aMalformedLineIsRefusedWithItsNumber() throws {
        let path = try self.file("MARQUEE_BROKERS=a:1\nnot a setting\n")
        let error = #expect(throws: SettingError.self) { try Settings(environment: [:], settingsFile: path) }
        #expect(error?.description == "\(path):2: expected NAME=value")
        let missing = #expect(throws: SettingError.self) {
            try Settings(environment: [:], settingsFile: "/nonexistent/marquee.env")
        }
        #expect(missing?.description == "cannot read the settings file /nonexistent/marquee.env")
    }

    @Test func aSecretComesFromItsFileAndIsNeverShown() throws {
        let secret = try self.file("security.protocol=sasl_ssl,sasl.password=hunter2\n")
        let settings = try Settings(environment: ["MARQUEE_KAFKA_PROPERTIES_FILE": secret])
        #expect(
            try settings.resolved(Catalogue.kafkaProperties) == (
                ["security.protocol": "sasl_ssl", "sasl.password": "hunter2"], .secretFile(secret)
            )
        )
        let printed = try settings.printed(Catalogue.all)
        #expect(printed.contains("MARQUEE_KAFKA_PROPERTIES=<redacted>  # secret file"))
        #expect(!printed.contains("hunter2"))

        let malformed = try Settings(environment: ["MARQUEE_KAFKA_PROPERTIES": "sasl.password"])
        let error = #expect(throws: SettingError.self) { try malformed.value(Catalogue.kafkaProperties) }
        #expect(
            error?.description
                == "MARQUEE_KAFKA_PROPERTIES (--kafka-property) from the environment: expected key=value pairs, comma-separated, such as security.protocol=ssl,ssl.ca.location=/etc/ca.pem"
        )
    }

    @Test func aSecretAndItsFileTogetherAreRefused() throws {
        let secret = try self.file("a=b")
        let settings = try Settings(environment: [
            "MARQUEE_KAFKA_PROPERTIES": "a=b", "MARQUEE_KAFKA_PROPERTIES_FILE": secret,
        ])
        let error = #expect(throws: SettingError.self) { try settings.value(Catalogue.kafkaProperties) }
        #expect(
            error?.description
                == "MARQUEE_KAFKA_PROPERTIES and MARQUEE_KAFKA_PROPERTIES_FILE are both set in the environment: set one"
        )
        let empty = try self.file("\n")
        let emptyFile = try Settings(environment: ["MARQUEE_KAFKA_PROPERTIES_FILE": empty])
        #expect(throws: SettingError.self) { try emptyFile.value(Catalogue.kafkaProperties) }
    }

    @Test func printedSettingsSayWhereEachCameFrom() throws {
        let settings = try Settings(flags: ["MARQUEE_GROUP": "g"], environment: ["MARQUEE_TOPIC_PREFIX": "p."])
        let lines = try settings.printed(Catalogue.worker).split(separator: "\n").map(String.init)
        #expect(lines.contains("MARQUEE_GROUP=g  # flag"))
        #expect(lines.contains("MARQUEE_TOPIC_PREFIX=p.  # env"))
        #expect(lines.contains("MARQUEE_SESSION_TIMEOUT=10s  # default"))
        #expect(lines.count == Catalogue.worker.count)
    }

    /// docs/operating.md holds the table of every setting as the declarations make it.
    @Test func theDocumentedTableIsTheDeclarations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/operating.md"), encoding: .utf8)
        let begin =
            "<!-- settings table: generated from Catalogue.all; swift test --filter theDocumentedTableIsTheDeclarations -->\n"
        let end = "\n<!-- end of the settings table -->"
        let start = try #require(text.range(of: begin), "docs/operating.md has the table's opening marker")
        let stop = try #require(text.range(of: end, range: start.upperBound..<text.endIndex))
        let documented = String(text[start.upperBound..<stop.lowerBound])
        let generated = Catalogue.markdownTable(Catalogue.all)
        #expect(
            documented == generated,
            "docs/operating.md's table differs from the declarations; it should read:\n\(generated)"
        )
    }

    @Test func everySettingIsDeclaredOnceAndWrittenDefaultsReadAsTheDefaults() {
        let names = Catalogue.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Catalogue.brokers.parse(Catalogue.brokers.defaultText) == Catalogue.brokers.defaultValue)
        #expect(Catalogue.topicPrefix.parse(Catalogue.topicPrefix.defaultText) == Catalogue.topicPrefix.defaultValue)
        #expect(Catalogue.retryDelays.parse(Catalogue.retryDelays.defaultText) == Catalogue.retryDelays.defaultValue)
        #expect(
            Catalogue.shutdownTimeout.parse(Catalogue.shutdownTimeout.defaultText)
                == Catalogue.shutdownTimeout.defaultValue
        )
        #expect(
            Catalogue.sessionTimeout.parse(Catalogue.sessionTimeout.defaultText)
                == Catalogue.sessionTimeout.defaultValue
        )
        #expect(
            Catalogue.maxMessageBytes.parse(Catalogue.maxMessageBytes.defaultText)
                == Catalogue.maxMessageBytes.defaultValue
        )
        #expect(Catalogue.storeTimeout.parse(Catalogue.storeTimeout.defaultText) == Catalogue.storeTimeout.defaultValue)
        #expect(Catalogue.logLevel.parse(Catalogue.logLevel.defaultText) == Catalogue.logLevel.defaultValue)
    }
}
