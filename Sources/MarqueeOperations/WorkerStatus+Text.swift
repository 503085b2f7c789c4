// MARK: - WorkerStatus + text for people

extension WorkerStatus {
    /// What `marquee status` prints: a row per worker (STAGE, ADDRESS, READY, its figures since it started, and
    /// the reason it is not ready); `-` for a figure the worker did not report.
    public static func table(_ statuses: [WorkerStatus]) -> String {
        let headers = [
            "STAGE", "ADDRESS", "READY", "IN FLIGHT", "ASSIGNED", "PAUSED", "SUCCEEDED", "RETRIED", "DLQ", "LAG",
            "REASON",
        ]
        var table = TextTable(
            headers.enumerated().map { index, header in
                TextTable.Column(
                    header: header,
                    alignment: (3...9).contains(index) ? .right : .left,
                    maxWidth: index == 10 ? 80 : 40
                )
            }
        )
        for status in statuses {
            let figures = status.figures
            let numbers = [
                figures?.inFlight, figures?.assignedPartitions, figures?.pausedPartitions, figures?.succeeded,
                figures?.retried, figures?.deadLettered, figures?.consumerLag,
            ].map { $0.map { String(Int64($0)) } ?? "-" }
            table.append([status.stage, status.address, status.state.rawValue] + numbers + [status.reason ?? ""])
        }
        return table.render()
    }
}
