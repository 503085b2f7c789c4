import MarqueeEmulator
import Testing

import struct Foundation.Data
import class Foundation.FileManager
import class Foundation.JSONSerialization
import class Foundation.NSNull
import class Foundation.NSNumber
import class Foundation.ProcessInfo
import struct Foundation.URL

#if canImport(FoundationNetworking)
import class FoundationNetworking.HTTPURLResponse
import class FoundationNetworking.URLSession
import class FoundationNetworking.URLSessionConfiguration
import struct FoundationNetworking.URLRequest
#endif

/// An in-process emulator on a free loopback port, with a plain HTTP client.
struct Harness {
    let server: EmulatorServer
    let session: URLSession

    static let key = EmulatorSettings.defaultKey

    static func with<T>(
        seed: UInt64 = 7,
        movies: Int = 300,
        books: Int = 200,
        settings: EmulatorSettings = EmulatorSettings(),
        _ body: (Harness) async throws -> T
    ) async throws -> T {
        let catalogue = Catalogue(CatalogueConfiguration(seed: seed, movies: movies, books: books))
        let renderer = try ImageRenderer(threads: 2, cacheBytes: 64 << 20)
        let emulator = Emulator(catalogue: catalogue, settings: settings, renderer: renderer)
        let server = try await EmulatorServer.start(emulator: emulator, port: 0, threads: 2)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 2
        configuration.httpMaximumConnectionsPerHost = 256
        let session = URLSession(configuration: configuration)
        let harness = Harness(server: server, session: session)
        do {
            let result = try await body(harness)
            session.invalidateAndCancel()
            try await server.shutdown()
            try await renderer.shutdown()
            return result
        } catch {
            session.invalidateAndCancel()
            try? await server.shutdown()
            try? await renderer.shutdown()
            throw error
        }
    }

    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]

        func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(self.body)) }
        func object() throws -> [String: Any] { try #require(try self.json() as? [String: Any]) }
        func header(_ name: String) -> String? {
            self.headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    func get(
        _ path: String,
        headers: [String: String] = [:],
        method: String = "GET",
        body: [UInt8]? = nil
    )
        async throws -> Reply
    {
        var request = URLRequest(url: try #require(URL(string: self.server.url + path)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body) }
        let (data, response) = try await self.session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Reply(status: http.statusCode, headers: fields, body: Array(data))
    }

    func control(_ json: [String: Any]) async throws {
        let reply = try await self.get(
            "/_control",
            method: "POST",
            body: Array(try JSONSerialization.data(withJSONObject: json))
        )
        #expect(reply.status == 200, "control failed: \(String(decoding: reply.body, as: UTF8.self))")
    }

    func stats() async throws -> [String: Any] { try await self.get("/_stats").object() }
}

/// The recorded real responses (Tests/Fixtures, a copy of the shared fixtures with their MANIFEST.md; or
/// $MARQUEE_FIXTURES).
enum Fixtures {
    static let directory: String = {
        if let path = ProcessInfo_environment("MARQUEE_FIXTURES") { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
    }()

    static func json(_ name: String) throws -> Any {
        let data = try #require(FileManager.default.contents(atPath: directory + "/" + name))
        return try JSONSerialization.jsonObject(with: data)
    }
}

func ProcessInfo_environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

/// Compares a response's structure with a fixture's: every key the emulator writes exists in the fixture (for
/// arrays: in some element), every key present in all fixture elements is present in the emulator's, and where
/// both values are non-null their JSON types agree (integers and floats are both numbers).
enum Shape {
    static func kind(_ value: Any) -> String {
        if value is NSNull { return "null" }
        // JSONSerialization gives NSNumber for numbers and booleans alike: both are "number|bool" here; the
        // string-versus-number distinction (KOFIC's numbers as strings) is what matters.
        if value is NSNumber { return "number|bool" }
        if value is String { return "string" }
        if value is [Any] { return "array" }
        if value is [String: Any] { return "object" }
        return "unknown"
    }

    static func compare(
        _ ours: Any,
        _ fixture: Any,
        path: String = "$",
        allowExtra: Set<String> = [],
        problems: inout [String]
    ) {
        let ourKind = kind(ours)
        let fixtureKind = kind(fixture)
        if ourKind == "null" || fixtureKind == "null" { return }
        guard ourKind == fixtureKind else {
            problems.append("\(path): \(ourKind) where the fixture has \(fixtureKind)")
            return
        }
        if let ourArray = ours as? [Any], let fixtureArray = fixture as? [Any] {
            guard !fixtureArray.isEmpty else { return }
            if let fixtureObjects = fixtureArray as? [[String: Any]] {
                // Merge the fixture's elements: union of keys (first non-null value), and keys in all of them.
                var merged: [String: Any] = [:]
                var everywhere = Set(fixtureObjects.first?.keys.map { $0 } ?? [])
                for object in fixtureObjects {
                    everywhere.formIntersection(object.keys)
                    for (key, value) in object where merged[key] == nil || merged[key] is NSNull { merged[key] = value }
                }
                for (index, element) in ourArray.enumerated() {
                    guard let object = element as? [String: Any] else {
                        problems.append("\(path)[\(index)]: not an object")
                        continue
                    }
                    for key in everywhere where object[key] == nil {
                        problems.append("\(path)[\(index)]: missing \(key)")
                    }
                    for (key, value) in object {
                        guard let fixtureValue = merged[key] else {
                            if !allowExtra.contains(key) { problems.append("\(path)[\(index)]: extra key \(key)") }
                            continue
                        }
                        compare(
                            value,
                            fixtureValue,
                            path: "\(path)[\(index)].\(key)",
                            allowExtra: allowExtra,
                            problems: &problems
                        )
                    }
                }
            } else {
                for (index, element) in ourArray.enumerated() {
                    compare(
                        element,
                        fixtureArray[0],
                        path: "\(path)[\(index)]",
                        allowExtra: allowExtra,
                        problems: &problems
                    )
                }
            }
            return
        }
        if let ourObject = ours as? [String: Any], let fixtureObject = fixture as? [String: Any] {
            for key in fixtureObject.keys where ourObject[key] == nil {
                problems.append("\(path): missing \(key)")
            }
            for (key, value) in ourObject {
                guard let fixtureValue = fixtureObject[key] else {
                    if !allowExtra.contains(key) { problems.append("\(path): extra key \(key)") }
                    continue
                }
                compare(value, fixtureValue, path: "\(path).\(key)", allowExtra: allowExtra, problems: &problems)
            }
        }
    }

    static func problems(_ ours: Any, _ fixture: Any, allowExtra: Set<String> = []) -> [String] {
        var problems: [String] = []
        compare(ours, fixture, allowExtra: allowExtra, problems: &problems)
        return problems
    }
}
