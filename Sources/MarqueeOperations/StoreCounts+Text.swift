public import MarqueeStore

// MARK: - StoreCounts + text for people

extension StoreCounts {
    /// What `marquee query counts` prints: a row per table (TABLE, ROWS), then where the store is and its schema
    /// version.
    ///
    /// - Parameters:
    ///   - location: Where the store is.
    ///   - schemaVersion: The store's schema version (`nil`: no schema).
    public func text(location: StoreLocation, schemaVersion: Int?) -> String {
        var table = TextTable([.init(header: "TABLE"), .init(header: "ROWS", alignment: .right)])
        for (name, count) in self.all {
            table.append([name, TextFormat.grouped(count)])
        }
        let version = schemaVersion.map { "schema version \($0)" } ?? "no schema"
        return table.render() + "\n" + "\(location), \(version)"
    }

    /// What `marquee drain` prints once drained: a row per table that holds anything (STORED, ROWS), the table
    /// names in words (`box office entries`).
    public var storedTable: String {
        var table = TextTable([.init(header: "STORED"), .init(header: "ROWS", alignment: .right)])
        for (name, count) in self.all where count > 0 {
            table.append([name.split(separator: "_").joined(separator: " "), TextFormat.grouped(count)])
        }
        return table.render()
    }
}
