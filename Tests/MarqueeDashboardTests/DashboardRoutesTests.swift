import Hummingbird
import HummingbirdTesting
import Logging
import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeOperations
import NIOCore
import Testing

@testable import MarqueeDashboard

/// The routes that need no broker and no store: the page before the first sample, assets, refusals.
@Suite struct DashboardRoutesTests {
    func dashboard(grafana: String? = nil) throws -> Dashboard {
        var configuration = DashboardConfiguration(
            layout: try PipelineLayout(settings: ["MARQUEE_WORKERS": "fetch=127.0.0.1:1"]),
            kafka: KafkaConfiguration(brokers: "127.0.0.1:1")
        )
        configuration.requestTimeout = .seconds(1)
        configuration.grafanaURL = grafana
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try Dashboard(configuration: configuration, logger: logger)
    }

    @Test func thePageBeforeTheFirstSampleIsCompleteAndAccessible() async throws {
        let dashboard = try self.dashboard(grafana: "http://grafana.example/d/marquee?x=1&y=2")
        let app = Application(router: dashboard.router())
        try await app.test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get) { $0 }
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.hasPrefix("<!doctype html>\n<html lang=\"en\">"))
            for landmark in [
                "<main id=\"content\"", "<nav aria-label=\"Sections\">", "class=\"skip\" href=\"#content\"",
                "<section id=\"lag\"", "<section id=\"workers\"", "<section id=\"dlq\"", "<section id=\"store\"",
                "name=\"viewport\"", "name=\"color-scheme\" content=\"light dark\"",
                "id=\"refresh-toggle\" aria-pressed=\"false\"",
            ] {
                #expect(html.contains(landmark), "\(landmark)")
            }
            #expect(html.contains("First sample pending"))
            #expect(html.contains("No sample yet."))
            #expect(html.contains("href=\"http://grafana.example/d/marquee?x=1&amp;y=2\""), "the Grafana link, escaped")
            #expect(html.contains("no store configured"))
            #expect(!html.contains("http://") || !html.contains("<script src=\"http"), "no assets from the internet")

            let lag = try await client.execute(uri: "/api/lag", method: .get) { $0 }
            #expect(lag.status == .ok)
            let json = try JSONValue.parse(Array(String(buffer: lag.body).utf8))
            guard case .object(let fields) = json else {
                Issue.record("not an object")
                return
            }
            #expect(fields["rounds"] == .integer(0))
            #expect(fields["stages"] == .array([]))

            let store = try await client.execute(uri: "/api/store", method: .get) { $0 }
            #expect(store.status == .serviceUnavailable)

            let css = try await client.execute(uri: "/assets/dashboard.css", method: .get) { $0 }
            #expect(String(buffer: css.body).contains("prefers-color-scheme: dark"))
            let script = try await client.execute(uri: "/assets/dashboard.js", method: .get) { $0 }
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let health = try await client.execute(uri: "/healthz", method: .get) { $0.status }
            #expect(health == .ok)
        }
    }

    @Test func refusesWhatIsNotAVariantOrALetterID() async throws {
        let app = Application(router: try self.dashboard().router())
        try await app.test(.router) { client in
            let sha = String(repeating: "ab", count: 32)
            for uri in [
                "/images/ab/ab/\(sha)/original", "/images/ab/ab/\(sha)/manifest.json", "/images/x/y/z/92.webp",
                "/images/ab/ab/\(sha)/92.webp",
            ] {
                let status = try await client.execute(uri: uri, method: .get) { $0.status }
                #expect(status == .notFound, "\(uri)")
            }
            let malformed = try await client.execute(uri: "/dlq/fetch/x/1", method: .get) { $0.status }
            #expect(malformed == .badRequest)
            let unknown = try await client.execute(uri: "/api/dlq/nostage/0/1", method: .get) { $0.status }
            #expect(unknown == .notFound)
        }
    }

    @Test func hostileTextIsEscapedInTemplates() {
        let html = DashboardTemplates.render("message", ["message": "<img src=x onerror=alert(1)>"])
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!html.contains("<img"))
    }
}
