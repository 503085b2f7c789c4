import MarqueeCore
public import MarqueeHTTP
import MarqueeJSON

/// What one worker process says about itself: its `/readyz` answer and the key figures of its `/metrics`.
public struct WorkerStatus: Sendable, Hashable, Encodable {
    public enum State: String, Sendable, Hashable, Encodable {
        /// `/readyz` answered 200: the worker takes jobs.
        case ready
        /// `/readyz` answered otherwise, with the worker's reason (a dependency down, not yet assigned…).
        case notReady = "not-ready"
        /// Nothing answered at the address.
        case unreachable
    }

    /// The key figures of a stage worker's `/metrics` (`marquee_stage_*`); `nil` where the worker did not
    /// report one.
    public struct Figures: Sendable, Hashable, Encodable {
        public var inFlight: Double?
        public var assignedPartitions: Double?
        public var pausedPartitions: Double?
        public var succeeded: Double?
        public var retried: Double?
        public var deadLettered: Double?
        /// The sum of the consumer lag the worker sees on its assigned partitions (librdkafka's statistics).
        public var consumerLag: Double?

        init(_ samples: [PrometheusSample]) {
            func sum(_ name: String, _ label: (String, String)? = nil) -> Double? {
                let matching = samples.filter { sample in
                    sample.name == name && (label.map { sample.labels[$0.0] == $0.1 } ?? true)
                }
                return matching.isEmpty ? nil : matching.map(\.value).reduce(0, +)
            }
            self.inFlight = sum("marquee_stage_in_flight")
            self.assignedPartitions = sum("marquee_stage_assigned_partitions")
            self.pausedPartitions = sum("marquee_stage_paused_partitions")
            self.succeeded = sum("marquee_stage_jobs_total", ("outcome", "succeeded"))
            self.retried = sum("marquee_stage_jobs_total", ("outcome", "retried"))
            self.deadLettered = sum("marquee_stage_jobs_total", ("outcome", "dead_lettered"))
            self.consumerLag = sum("marquee_stage_consumer_lag")
        }
    }

    public var stage: String
    /// `host:port` of the worker's observability endpoints.
    public var address: String
    public var state: State
    /// Why the worker is not ready, or why it could not be reached: one line of text (``readableReason(_:status:)``).
    public var reason: String?
    /// `nil` when `/metrics` could not be read.
    public var figures: Figures?

    /// Asks the worker at `address` for `/readyz` and `/metrics`.
    ///
    /// Never throws: an address where nothing answers is ``State/unreachable`` with the reason.
    public static func probe(stage: String, address: String, using fetcher: HTTPFetcher) async -> WorkerStatus {
        var status = WorkerStatus(stage: stage, address: address, state: .unreachable, reason: nil, figures: nil)
        do {
            let ready = try await fetcher.fetch(FetchRequest(url: "http://\(address)/readyz", limitKey: "status"))
            status.state = ready.status == 200 ? .ready : .notReady
            if ready.status != 200 { status.reason = Self.readableReason(ready.body, status: ready.status) }
        } catch {
            status.reason = error.reason
            return status
        }
        if let metrics = try? await fetcher.fetch(FetchRequest(url: "http://\(address)/metrics", limitKey: "status")),
            metrics.status == 200
        {
            status.figures = Figures(PrometheusSample.parse(String(decoding: metrics.body, as: UTF8.self)))
        }
        return status
    }
}

extension WorkerStatus {
    /// The longest reason kept, in characters (a table's column, a line of a page).
    static let maxReasonLength = 500

    /// A `/readyz` answer's body as one line an operator reads: the message of a JSON error body
    /// (`{"error":{"message":"…"}}`, as workers before text answers and Hummingbird's errors send it, or
    /// `{"message":"…"}`/`{"reason":"…"}`), line breaks and other control characters as spaces, runs of spaces as
    /// one, at most ``maxReasonLength`` characters; `/readyz answered <status>` for an empty body.
    ///
    /// - Parameters:
    ///   - body: The response's body.
    ///   - status: The response's status, named when the body says nothing.
    public static func readableReason(_ body: [UInt8], status: Int) -> String {
        var text = String(decoding: body, as: UTF8.self)
        if let message = Self.jsonMessage(body) { text = message }
        var line = ""
        var pendingSpace = false
        for character in text {
            if character.isWhitespace
                || character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            {
                pendingSpace = !line.isEmpty
                continue
            }
            if pendingSpace { line.append(" ") }
            pendingSpace = false
            line.append(character)
        }
        if line.isEmpty { return "/readyz answered \(status)" }
        if line.count > Self.maxReasonLength { line = String(line.prefix(Self.maxReasonLength - 1)) + "…" }
        return line
    }

    /// The message of a JSON error body, if the body is one.
    private static func jsonMessage(_ body: [UInt8]) -> String? {
        guard body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{"),
            case .object(let object)? = try? JSONValue.parse(body)
        else { return nil }
        if case .object(let error)? = object["error"] {
            if case .string(let message)? = error["message"] { return message }
            if case .string(let reason)? = error["reason"] { return reason }
        }
        if case .string(let message)? = object["error"] { return message }
        if case .string(let message)? = object["message"] { return message }
        if case .string(let reason)? = object["reason"] { return reason }
        return nil
    }
}

/// One sample of Prometheus' text exposition format: `name{label="value",…} value`.
public struct PrometheusSample: Sendable, Hashable {
    public var name: String
    public var labels: [String: String]
    public var value: Double

    public init(name: String, labels: [String: String], value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }

    /// The samples of an exposition; comment lines and lines that are no sample are skipped.
    public static func parse(_ text: String) -> [PrometheusSample] {
        text.split(separator: "\n").compactMap { line in
            let line = Substring(line.trimmingWhitespace())
            guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
            var labels: [String: String] = [:]
            let name: Substring
            let rest: Substring
            if let open = line.firstIndex(of: "{") {
                guard let close = line.lastIndex(of: "}"), close > open else { return nil }
                name = line[..<open]
                labels = Self.labels(line[line.index(after: open)..<close])
                rest = line[line.index(after: close)...]
            } else {
                guard let space = line.firstIndex(of: " ") else { return nil }
                name = line[..<space]
                rest = line[space...]
            }
            // The value, then an optional timestamp.
            guard let valueText = rest.split(separator: " ").first, let value = Double(valueText) else { return nil }
            return PrometheusSample(name: String(name), labels: labels, value: value)
        }
    }

    /// `a="x",b="y \"quoted\""` → `["a": "x", "b": "y \"quoted\""]`.
    private static func labels(_ text: Substring) -> [String: String] {
        var labels: [String: String] = [:]
        var index = text.startIndex
        while index < text.endIndex {
            guard let equals = text[index...].firstIndex(of: "=") else { break }
            let name = text[index..<equals].trimmingWhitespace().trimmingCharacters(",")
            var cursor = text.index(after: equals)
            guard cursor < text.endIndex, text[cursor] == "\"" else { break }
            cursor = text.index(after: cursor)
            var value = ""
            while cursor < text.endIndex, text[cursor] != "\"" {
                if text[cursor] == "\\", text.index(after: cursor) < text.endIndex {
                    cursor = text.index(after: cursor)
                    value.append(text[cursor] == "n" ? "\n" : text[cursor])
                } else {
                    value.append(text[cursor])
                }
                cursor = text.index(after: cursor)
            }
            labels[name] = value
            index = cursor < text.endIndex ? text.index(after: cursor) : cursor
        }
        return labels
    }
}

extension String {
    fileprivate func trimmingCharacters(_ character: Character) -> String {
        String(self.drop { $0 == character })
    }
}
