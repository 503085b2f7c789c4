import Hummingbird
import MarqueeCore
import MarqueeJSON
import MarqueeKafka
import MarqueeObservability
import MarqueeOperations
import MarqueeStore

import struct Foundation.Date
import class Foundation.JSONEncoder

// MARK: - Dashboard + Panels

extension Dashboard {
    // MARK: Pages

    func overviewPage(_ request: Request) async -> Response {
        let snapshot = await self.monitor.snapshot()
        var context: [String: Any] = [
            "statusSamples": self.configuration.statusSamples,
            "interval": Format.duration(self.configuration.sampleInterval),
        ]
        context.merge(self.lagContext(snapshot)) { $1 }
        context.merge(self.workersContext(snapshot)) { $1 }
        context.merge(self.deadLettersContext(snapshot)) { $1 }
        context.merge(await self.storeContext()) { $1 }
        let body = DashboardTemplates.render("overview", context)
        return self.page(title: "Pipeline", body: body, snapshot: snapshot)
    }

    func deadLetterPage(_ id: DeadLetterID) async -> Response {
        let snapshot = await self.monitor.snapshot()
        let letter: DeadLetter?
        do {
            letter = try await self.deadLetters.letters([id])[id]
        } catch {
            let body = DashboardTemplates.render("message", ["message": "Dead letters cannot be read: \(error.reason)"])
            return self.page(title: "Dead letter \(id)", body: body, snapshot: snapshot, status: .serviceUnavailable)
        }
        guard let letter else {
            let body = DashboardTemplates.render(
                "message",
                ["message": "No dead letter \(id): wrong id, or deleted by the topic's retention."]
            )
            return self.page(title: "Dead letter \(id)", body: body, snapshot: snapshot, status: .notFound)
        }
        let context: [String: Any] = [
            "id": letter.id.description,
            "topic": letter.record.topic,
            "partition": Int(letter.id.partition),
            "offset": letter.id.offset,
            "kind": letter.kind,
            "errorKind": letter.errorKind,
            "error": letter.error ?? "—",
            "attempt": letter.attempt.map(String.init) ?? "—",
            "origin": letter.origin ?? "—",
            "jobID": letter.jobID ?? "—",
            "root": letter.root ?? "—",
            "parent": letter.parent ?? "—",
            "key": letter.record.keyString ?? "—",
            "time": letter.timestamp.map(Format.time) ?? "—",
            "isPurged": letter.isPurged,
            "headers": letter.record.headers.map { header -> [String: Any] in
                ["name": header.key, "value": header.stringValue ?? DeadLetter.escaped(header.value ?? [])]
            },
            "payloadForm": letter.payloadForm.rawValue,
            "payloadBytes": letter.record.value.count,
            "payload": letter.readablePayload,
        ]
        let body = DashboardTemplates.render("deadLetter", context)
        return self.page(title: "Dead letter \(letter.id)", body: body, snapshot: snapshot, refreshing: false)
    }

    func page(
        title: String,
        body: String,
        snapshot: MonitorSnapshot,
        status: HTTPResponse.Status = .ok,
        refreshing: Bool = true
    ) -> Response {
        var context: [String: Any] = [
            "title": title,
            "body": body,
            "refreshSeconds": self.configuration.refreshSeconds,
            "refreshing": refreshing,
            "rounds": snapshot.rounds,
            "sampled": snapshot.lastRound.map { "Sampled \(Format.time($0)) UTC" } ?? "First sample pending",
        ]
        if let grafana = self.configuration.grafanaURL, !grafana.isEmpty { context["grafanaURL"] = grafana }
        return Self.text(
            DashboardTemplates.render("page", context),
            contentType: "text/html; charset=utf-8",
            status: status
        )
    }

    // MARK: Lag

    func lagContext(_ snapshot: MonitorSnapshot) -> [String: Any] {
        var context: [String: Any] = [:]
        if let error = snapshot.lagError { context["lagError"] = error }
        let now = snapshot.lastRound ?? DashboardMonitor.nowMilliseconds()
        context["stages"] = (snapshot.report?.stages ?? []).map { stage -> [String: Any] in
            let history = snapshot.history[stage.stage] ?? []
            let charts = [
                LineChart(
                    id: "chart-\(stage.stage)-messages",
                    title: "\(stage.stage): lag in messages",
                    unit: "messages",
                    points: history.map { .init(time: $0.time, value: Double($0.lag)) },
                    now: now
                ),
                LineChart(
                    id: "chart-\(stage.stage)-seconds",
                    title: "\(stage.stage): lag in seconds (oldest due message)",
                    unit: "seconds",
                    points: history.map { .init(time: $0.time, value: $0.lagSeconds ?? 0) },
                    now: now
                ),
            ]
            var tiers: [String: (tier: Int, overdue: Int64, notYetDue: Int64, unscanned: Int64)] = [:]
            for partition in stage.partitions {
                guard let tier = partition.sample.tier else { continue }
                let backlog = partition.sample.retry
                var entry = tiers[partition.partition.topic] ?? (tier, 0, 0, 0)
                entry.overdue += backlog?.overdue ?? 0
                entry.notYetDue += backlog?.notYetDue ?? 0
                entry.unscanned += backlog?.unscanned ?? 0
                tiers[partition.partition.topic] = entry
            }
            let tierRows = tiers.sorted { $0.value.tier < $1.value.tier }.map { topic, entry -> [String: Any] in
                [
                    "topic": topic, "tier": entry.tier, "stage": stage.stage, "overdue": entry.overdue,
                    "notYetDue": entry.notYetDue, "unscanned": entry.unscanned,
                ]
            }
            return [
                "stage": stage.stage,
                "group": stage.group,
                "members": "\(stage.members) member\(stage.members == 1 ? "" : "s")",
                "status": stage.status.rawValue,
                "statusClass": stage.status.rawValue.lowercased(),
                "reason": stage.reason,
                "lag": stage.totals.lag,
                "due": stage.totals.dueLag,
                "lagAge": stage.totals.lagAge.map(Format.duration) ?? "—",
                "rate": stage.totals.rate.map { Format.rate($0) } ?? "—",
                "drain": stage.totals.dueLag == 0
                    ? "nothing due" : stage.totals.drainTime.map(Format.duration) ?? "not at this rate",
                "charts": charts.map { chart -> [String: Any] in
                    [
                        "id": chart.id, "svg": chart.svg, "caption": chart.summary, "unit": chart.unit.capitalized,
                        "rows": chart.tableRows().map { point -> [String: Any] in
                            ["time": Format.time(point.time), "value": point.value.map(LineChart.number) ?? "—"]
                        },
                    ]
                },
                "hasTiers": !tierRows.isEmpty,
                "tiers": tierRows,
                "notes": stage.notes + stage.missingTopics.map { "\($0) does not exist yet (no lag)" },
            ]
        }
        return context
    }

    func lagJSON() async -> JSONValue {
        let snapshot = await self.monitor.snapshot()
        var object: JSONObject = [:]
        if let report = snapshot.report, case .object(let fields)? = try? JSONValue.parse(Array(report.json().utf8)) {
            object = fields
        } else {
            object["stages"] = .array([])
        }
        object["error"] = snapshot.lagError.map(JSONValue.string) ?? .null
        object["rounds"] = .integer(Int64(snapshot.rounds))
        object["sample_interval_seconds"] = .number(DashboardMonitor.seconds(self.configuration.sampleInterval))
        object["status_samples"] = .integer(Int64(self.configuration.statusSamples))
        var history: JSONObject = [:]
        for (stage, points) in snapshot.history {
            history[stage] = .array(
                points.map { point in
                    .object([
                        "time_ms": .integer(point.time),
                        "lag": .integer(point.lag),
                        "lag_due": .integer(point.dueLag),
                        "lag_seconds": point.lagSeconds.map(JSONValue.number) ?? .null,
                        "rate": point.rate.map(JSONValue.number) ?? .null,
                    ])
                }
            )
        }
        object["history"] = .object(history)
        return .object(object)
    }

    // MARK: Workers

    func workersContext(_ snapshot: MonitorSnapshot) -> [String: Any] {
        let since = snapshot.workers.map(\.firstSeen).min()
        var context: [String: Any] = [
            "hasWorkers": !snapshot.workers.isEmpty,
            "since": since.map { Format.time($0) + " UTC" } ?? "—",
            "workers": snapshot.workers.map { record -> [String: Any] in
                let figures = record.status?.figures
                func figure(_ value: Double?) -> String { value.map(LineChart.number) ?? "—" }
                return [
                    "stage": record.target.stage,
                    "id": record.target.label,
                    "address": record.target.address ?? "no address announced",
                    "member": Self.memberText(record.target),
                    "state": Self.state(of: record),
                    "reason": Self.reason(of: record) ?? "",
                    "inFlight": figure(figures?.inFlight),
                    "assigned": figure(figures?.assignedPartitions),
                    "paused": figure(figures?.pausedPartitions),
                    "succeeded": figure(figures?.succeeded),
                    "retried": figure(figures?.retried),
                    "deadLettered": figure(figures?.deadLettered),
                    "restarts": record.restarts,
                ]
            },
        ]
        if let error = snapshot.workersError { context["workersError"] = error }
        return context
    }

    func workersJSON() async -> JSONValue {
        let snapshot = await self.monitor.snapshot()
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        return .object([
            "rounds": .integer(Int64(snapshot.rounds)),
            "groups_error": snapshot.workersError.map(JSONValue.string) ?? .null,
            "workers": .array(
                snapshot.workers.map { record in
                    let figures = record.status?.figures
                    return .object([
                        "stage": .string(record.target.stage),
                        "address": record.target.address.map(JSONValue.string) ?? .null,
                        "found_by": .array(record.target.sources.map { .string($0.rawValue) }),
                        "members": .array(
                            record.target.members.map { member in
                                .object([
                                    "client_id": .string(WorkerTarget.clientID(of: member)),
                                    "host": .string(member.host),
                                    "member_id": .string(member.memberID),
                                ])
                            }
                        ),
                        "state": .string(Self.state(of: record)),
                        "reason": Self.reason(of: record).map(JSONValue.string) ?? .null,
                        "figures": figures.map { figures in
                            .object([
                                "in_flight": number(figures.inFlight),
                                "assigned_partitions": number(figures.assignedPartitions),
                                "paused_partitions": number(figures.pausedPartitions),
                                "succeeded": number(figures.succeeded),
                                "retried": number(figures.retried),
                                "dead_lettered": number(figures.deadLettered),
                                "consumer_lag": number(figures.consumerLag),
                            ])
                        } ?? .null,
                        "restarts": .integer(Int64(record.restarts)),
                        "first_seen_ms": .integer(record.firstSeen),
                        "last_answered_ms": record.lastAnswered.map(JSONValue.integer) ?? .null,
                    ])
                }
            ),
        ])
    }

    /// `ready`, `not-ready`, `unreachable`, or `no-address` for a member that announces none.
    static func state(of record: WorkerRecord) -> String {
        record.status?.state.rawValue ?? "no-address"
    }

    static func reason(of record: WorkerRecord) -> String? {
        if let status = record.status { return status.reason }
        if let member = record.target.members.first,
            let announced = AnnouncedAddress(clientID: WorkerTarget.clientID(of: member)), announced.isUnspecified
        {
            return "no address announced: \(announced) asks for the host the broker sees, and the broker reports none"
        }
        return "no address announced"
    }

    /// The group members found at a worker's address (`client id (host)`), or where else it was found.
    static func memberText(_ target: WorkerTarget) -> String {
        guard !target.members.isEmpty else { return "not in the group (MARQUEE_WORKERS)" }
        return target.members.map { "\(WorkerTarget.clientID(of: $0)) (\($0.host.isEmpty ? "host unknown" : $0.host))" }
            .joined(separator: ", ")
    }

    // MARK: Dead letters

    func deadLettersContext(_ snapshot: MonitorSnapshot) -> [String: Any] {
        var context: [String: Any] = [:]
        if let error = snapshot.deadLetterError { context["dlqError"] = error }
        guard let summary = snapshot.deadLetters else { return context }
        var dlq: [String: Any] = [
            "total": summary.total,
            "byStage": self.configuration.layout.stages.map { stage -> [String: Any] in
                ["stage": stage.name, "count": summary.byStage[stage.name] ?? 0]
            },
            "hasCounts": summary.total > 0,
            "counts": summary.counts.sorted { $0.key < $1.key }.map { count, letters -> [String: Any] in
                ["stage": count.stage, "kind": count.kind, "errorKind": count.errorKind, "count": letters]
            },
            "latestCount": summary.latest.count,
            "latest": summary.latest.reversed().map { letter -> [String: Any] in
                [
                    "id": letter.id.description,
                    "time": letter.timestamp.map(Format.time) ?? "—",
                    "kind": letter.kind,
                    "errorKind": letter.errorKind,
                    "error": letter.error ?? "—",
                ]
            },
        ]
        if summary.purged > 0 { dlq["purged"] = summary.purged }
        context["dlq"] = dlq
        return context
    }

    func deadLettersJSON() async -> JSONValue {
        let snapshot = await self.monitor.snapshot()
        let now = DashboardMonitor.nowMilliseconds()
        guard let summary = snapshot.deadLetters else {
            return .object([
                "error": snapshot.deadLetterError.map(JSONValue.string) ?? .null, "total": .null, "by_stage": .null,
                "counts": .array([]), "latest": .array([]), "purged": .null,
            ])
        }
        return .object([
            "error": snapshot.deadLetterError.map(JSONValue.string) ?? .null,
            "total": .integer(Int64(summary.total)),
            "purged": .integer(summary.purged),
            "by_stage": .object(JSONObject(summary.byStage.mapValues { .integer(Int64($0)) })),
            "counts": .array(
                summary.counts.sorted { $0.key < $1.key }.map { count, letters in
                    .object([
                        "stage": .string(count.stage), "kind": .string(count.kind),
                        "error_kind": .string(count.errorKind), "count": .integer(Int64(letters)),
                    ])
                }
            ),
            "latest": .array(summary.latest.reversed().map { $0.json(nowMilliseconds: now) }),
        ])
    }

    /// One letter with its headers and payload, or `nil` when there is none with that id.
    func deadLetterJSON(_ id: DeadLetterID) async throws -> JSONValue? {
        guard self.configuration.layout.stage(id.stage) != nil else { return nil }
        let letter: DeadLetter?
        do {
            letter = try await self.deadLetters.letters([id])[id]
        } catch {
            throw HTTPError(.serviceUnavailable, message: "dead letters cannot be read: \(error.reason)")
        }
        return letter?.json(nowMilliseconds: DashboardMonitor.nowMilliseconds(), includingContent: true)
    }

    // MARK: Store

    func storeContext() async -> [String: Any] {
        let contents: StoreContents
        do {
            contents = try await self.storeContents()
        } catch {
            return ["storeError": "The store cannot be read: \(error)"]
        }
        let counts = contents.counts
        return [
            "store": [
                "location": contents.location,
                "movies": counts.movies,
                "boxOfficeLists": counts.boxOfficeCharts,
                "boxOfficeEntries": counts.boxOfficeEntries,
                "books": counts.books,
                "images": counts.images,
                "all": counts.all.map {
                    ["name": $0.name.replacingOccurrences(of: "_", with: " "), "count": $0.count]
                },
                "latest": contents.latest.map { item -> [String: Any] in
                    var entry: [String: Any] = [
                        "key": item.key,
                        "kind": item.kind,
                        "title": item.title ?? item.key,
                        "initial": String((item.title ?? "?").prefix(1)),
                        "fetched": Format.time(item.fetchedAt),
                    ]
                    if let image = item.image, let variant = Self.thumbnail(image), self.imageStore != nil {
                        entry["thumbnail"] = "/images/\(variant.storeKey)"
                        entry["role"] = image.role
                        if let color = image.dominantColor, Self.isHexColor(color) { entry["color"] = color }
                    }
                    return entry
                },
            ] as [String: Any]
        ]
    }

    func storeJSON() async -> (HTTPResponse.Status, JSONValue) {
        do {
            let contents = try await self.storeContents()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let counts = try JSONValue.parse(try encoder.encode(contents.counts))
            let latest = try JSONValue.parse(try encoder.encode(contents.latest))
            var items: [JSONValue] = []
            if case .array(let values) = latest {
                for (item, value) in zip(contents.latest, values) {
                    guard case .object(var fields) = value else { continue }
                    let thumbnail = item.image.flatMap(Self.thumbnail).map { "/images/\($0.storeKey)" }
                    fields["thumbnail"] = self.imageStore == nil ? .null : thumbnail.map(JSONValue.string) ?? .null
                    items.append(.object(fields))
                }
            }
            return (.ok, .object(["location": .string(contents.location), "counts": counts, "latest": .array(items)]))
        } catch {
            return (.serviceUnavailable, .object(["error": .string("the store cannot be read: \(error)")]))
        }
    }

    struct StoreContents {
        var location: String
        var counts: StoreCounts
        var latest: [IngestedItem]
    }

    func storeContents() async throws -> StoreContents {
        let store = try self.store.store()
        return StoreContents(
            location: store.location.description,
            counts: try await store.counts(),
            latest: try await store.latestItems(limit: max(1, self.configuration.latestItems))
        )
    }

    /// The variant shown as a thumbnail: the narrowest WebP, else the narrowest of any format.
    static func thumbnail(_ image: StoredImage) -> StoredImageVariant? {
        image.variants.filter { $0.format == "webp" }.min { $0.width < $1.width }
            ?? image.variants.min { $0.width < $1.width }
    }

    static func isHexColor(_ text: String) -> Bool {
        text.count == 7 && text.first == "#" && text.dropFirst().allSatisfy(\.isHexDigit)
    }
}

/// Numbers and times for people.
enum Format {
    /// `2026-11-22 15:40:02` (UTC).
    static func time(_ milliseconds: Int64) -> String {
        let text = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            .formatted(Date.ISO8601FormatStyle(timeSeparator: .colon, timeZoneSeparator: .omitted))
        return String(text.replacingOccurrences(of: "T", with: " ").prefix(19))
    }

    static func duration(_ duration: Duration) -> String { duration.compactDescription }

    /// `85.0/s`.
    static func rate(_ rate: Double) -> String { String((rate * 10).rounded() / 10) + "/s" }
}
