import MarqueeObservability
import Testing

/// The address a process announces in its Kafka client id, and what the dashboard reads back.
@Suite struct AnnouncedAddressTests {
    @Test(arguments: [
        ("10.0.0.5", 9101, "marquee-fetch_10.0.0.5_9101", "10.0.0.5:9101"),
        ("marquee-fetch", 9101, "marquee-fetch_marquee-fetch_9101", "marquee-fetch:9101"),
        ("fetch-7d9c.marquee.svc", 9101, "marquee-fetch_fetch-7d9c.marquee.svc_9101", "fetch-7d9c.marquee.svc:9101"),
        ("marquee_fetch_1", 9101, "marquee-fetch_marquee_fetch_1_9101", "marquee_fetch_1:9101"),
        ("fd00::1", 9101, "marquee-fetch_fd00__1_9101", "[fd00::1]:9101"),
        ("[fd00::1]", 9101, "marquee-fetch_fd00__1_9101", "[fd00::1]:9101"),
        ("::1", 1, "marquee-fetch___1_1", "[::1]:1"),
        ("::ffff:10.0.0.5", 65535, "marquee-fetch___ffff_10.0.0.5_65535", "[::ffff:10.0.0.5]:65535"),
        ("0.0.0.0", 9101, "marquee-fetch_0.0.0.0_9101", "0.0.0.0:9101"),
    ])
    func aClientIDCarriesTheAddressAndReadsBack(host: String, port: Int, clientID: String, address: String) throws {
        let announced = try #require(AnnouncedAddress(host: host, port: port))
        #expect(AnnouncedAddress.clientID(name: "marquee-fetch", announcing: announced) == clientID)
        let read = try #require(AnnouncedAddress(clientID: clientID))
        #expect(read == announced)
        #expect(read.description == address)
        // Only the characters every broker takes in a client id.
        #expect(clientID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
    }

    @Test func whatCannotBeAnnouncedIsNot() {
        #expect(AnnouncedAddress(host: "10.0.0.5", port: 0) == nil, "port 0 is chosen when the listener binds")
        #expect(AnnouncedAddress(host: "10.0.0.5", port: 65536) == nil)
        #expect(AnnouncedAddress(host: "", port: 9101) == nil)
        #expect(AnnouncedAddress(host: "fe80::1%eth0", port: 9101) == nil, "a zone has no place in a client id")
        #expect(AnnouncedAddress(host: "a host", port: 9101) == nil)
        #expect(AnnouncedAddress(host: "fd00:x::1", port: 9101) == nil, "no IPv6 address")
        #expect(AnnouncedAddress(host: "fd00__1", port: 9101) == nil, "a name that would read back as fd00::1")
        #expect(AnnouncedAddress.clientID(name: "marquee-fetch", announcing: nil) == "marquee-fetch")
        #expect(
            AnnouncedAddress.clientID(name: "my_worker@a", announcing: nil) == "my-worker-a",
            "the name keeps no '_'"
        )
    }

    @Test(arguments: [
        "marquee-fetch", "rdkafka", "marquee-fetch_10.0.0.5", "marquee-fetch_10.0.0.5_", "_10.0.0.5_9101",
        "marquee-fetch_10.0.0.5_port", "marquee-fetch_10.0.0.5_0", "marquee-fetch_10.0.0.5_123456",
        "consumer-my_group-1",
        "marquee-fetch__9101",
    ])
    func clientIDsThatAnnounceNothing(clientID: String) {
        #expect(AnnouncedAddress(clientID: clientID) == nil)
    }

    @Test func theDefaultIsTheBindAddressOrTheHostName() {
        func announced(_ advertised: String, _ host: String, _ port: Int) -> String? {
            AnnouncedAddress.announced(advertised: advertised, bindHost: host, bindPort: port, hostName: "node-3")?
                .description
        }
        #expect(announced("", "127.0.0.1", 9101) == "127.0.0.1:9101", "a specific bind address")
        #expect(announced("", "10.1.2.3", 9101) == "10.1.2.3:9101")
        #expect(announced("", "0.0.0.0", 9101) == "node-3:9101", "every interface: the host name")
        #expect(announced("", "::", 9101) == "node-3:9101")
        #expect(announced("", "127.0.0.1", 0) == nil, "the port is chosen after the client id is set")
        #expect(announced("10.9.8.7:9101", "0.0.0.0", 9101) == "10.9.8.7:9101", "the advertised address wins")
        #expect(announced("10.9.8.7:19101", "0.0.0.0", 0) == "10.9.8.7:19101", "even on a free port (port mapping)")
        #expect(announced("[fd00::5]:9101", "::", 9101) == "[fd00::5]:9101")
        #expect(announced("0.0.0.0:9101", "0.0.0.0", 9101) == "0.0.0.0:9101", "the broker's view, read back")
        #expect(
            AnnouncedAddress.announced(advertised: "", bindHost: "0.0.0.0", bindPort: 9101, hostName: nil) == nil,
            "no host name"
        )
    }

    @Test func advertisedAddressesAreHostAndPort() {
        #expect(AnnouncedAddress.hostAndPort("10.0.0.5:9101")! == ("10.0.0.5", 9101))
        #expect(AnnouncedAddress.hostAndPort("[fd00::1]:9101")! == ("fd00::1", 9101))
        #expect(
            AnnouncedAddress.hostAndPort("[10.0.0.5]:9101")! == ("10.0.0.5", 9101),
            "as `[$(POD_IP)]:9101` gives it"
        )
        for text in [
            "", "10.0.0.5", "10.0.0.5:0", ":9101", "fd00::1:9101", "a b:9101", "host:65536", "[fd00::x]:1", "[]:9101",
        ] {
            #expect(AnnouncedAddress.hostAndPort(text) == nil, "\(text)")
        }
    }

    @Test func anUnspecifiedHostIsTheOneTheBrokerSees() throws {
        let announced = try #require(AnnouncedAddress(clientID: "marquee-fetch_0.0.0.0_9101"))
        #expect(announced.isUnspecified)
        #expect(announced.resolved(memberHost: "/172.18.0.5")?.description == "172.18.0.5:9101", "Apache Kafka's form")
        #expect(announced.resolved(memberHost: "172.18.0.5")?.description == "172.18.0.5:9101")
        #expect(announced.resolved(memberHost: "/fd00::7")?.description == "[fd00::7]:9101")
        #expect(announced.resolved(memberHost: "") == nil)
        #expect(announced.resolved(memberHost: "/0.0.0.0") == nil)
        let specific = try #require(AnnouncedAddress(clientID: "marquee-fetch_10.0.0.5_9101"))
        #expect(specific.resolved(memberHost: "/172.18.0.5") == specific, "a specific host is kept")
    }
}
