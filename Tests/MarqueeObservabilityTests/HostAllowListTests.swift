import MarqueeObservability
import Testing

@Suite struct HostAllowListTests {
    @Test func theDashboardDefaultAnswersLoopbackNamesOnly() {
        let list = HostAllowList.dashboard
        for host in [
            "localhost", "localhost:8080", "LOCALHOST:8080", "localhost.:8080", "127.0.0.1", "127.0.0.1:8080",
            "[::1]:8080", "[::1]", "[0:0:0:0:0:0:0:1]:8080",
        ] {
            #expect(list.allows(host: host), "\(host)")
        }
        for host in [
            "evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.evil.example:8080",
            "10.0.0.5:8080", "[::2]:8080", "marquee-fetch:8080",
        ] {
            #expect(!list.allows(host: host), "\(host)")
        }
    }

    @Test func malformedHostHeadersAreRefused() {
        let list = HostAllowList.observability
        for host in [
            "::1", "localhost:", "localhost:port", "localhost:123456", "[::1", "[::1]x", "local host", "é.example",
        ] {
            #expect(!list.allows(host: host), "\(host)")
        }
    }

    @Test func aRequestWithoutHostIsAnswered() {
        #expect(HostAllowList.dashboard.allows(host: nil), "a browser always sends Host")
        #expect(HostAllowList.dashboard.allows(host: ""))
    }

    @Test func theObservabilityDefaultAnswersAddressesAndNamesWithoutADot() {
        let list = HostAllowList.observability
        for host in [
            "localhost:9101", "10.42.0.17:9101", "[fd00::17]:9101", "192.168.1.5", "marquee-fetch:9101",
            "marquee-fetch",
        ] {
            #expect(list.allows(host: host), "\(host)")
        }
        for host in ["evil.example:9101", "marquee-fetch.marquee.svc:9101", "10.42.0.17.nip.io:9101"] {
            #expect(!list.allows(host: host), "\(host)")
        }
    }

    @Test func entriesNameHostsAddressesAndDomains() throws {
        let list = try HostAllowList.dashboard.adding(["Dash.Example.org.", "10.0.0.5", "[fd00::5]", ".corp.example"])
        #expect(
            list.entries == [
                "localhost", "127.0.0.1", "::1", "dash.example.org", "10.0.0.5", "fd00::5", ".corp.example",
            ]
        )
        for host in [
            "dash.example.org:443", "10.0.0.5:8080", "[fd00::5]:8080", "corp.example", "a.b.corp.example:8080",
        ] {
            #expect(list.allows(host: host), "\(host)")
        }
        for host in ["example.org", "xcorp.example", "10.0.0.6:8080", "dash.example.org.evil.example"] {
            #expect(!list.allows(host: host), "\(host)")
        }
        #expect(try HostAllowList.dashboard.adding(["*"]).allows(host: "anything.example:1"))
    }

    @Test func theBindAddressIsAdded() {
        #expect(HostAllowList.dashboard.adding(bindAddress: "10.0.0.5").allows(host: "10.0.0.5:8080"))
        #expect(HostAllowList.dashboard.adding(bindAddress: "dash-host").allows(host: "dash-host:8080"))
        #expect(HostAllowList.dashboard.adding(bindAddress: "not a name").entries == HostAllowList.loopback)
    }

    @Test(arguments: [
        ("", "is empty"),
        ("dash.example:8080", "has a port"),
        ("http://dash.example", "without a scheme or a path"),
        ("dash.example/path", "without a scheme or a path"),
        ("dash..example", "is not a host name"),
        ("..example", "is not a host name"),
        ("dash example", "is not a host name"),
    ])
    func badEntriesSayWhatIsWrong(entry: String, message: String) {
        #expect {
            _ = try HostAllowList.dashboard.adding([entry])
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func environmentListsAreSplitAtCommas() {
        #expect(HostAllowList.split(" a.example, ,b.example ,") == ["a.example", "b.example"])
        #expect(HostAllowList.split("").isEmpty)
    }
}
