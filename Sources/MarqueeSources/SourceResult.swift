public import MarqueeCore

/// What a response yields: records for the index stage, follow-up fetch jobs and image jobs.
public struct SourceResult: Sendable, Hashable {
    /// Records for `marquee.records`.
    public var records: [Record]
    /// Follow-up jobs for `marquee.fetch`.
    public var fetchJobs: [FetchJob]
    /// Downloads for `marquee.images`.
    public var imageJobs: [ImageJob]
    /// Follow-ups the adapter left out because they would not pass the payload checks of the next stage (e.g.
    /// an Open Library edition key where a work id is needed), one line each, for the worker's log.
    public var skipped: [String]

    /// Creates a result.
    public init(records: [Record] = [], fetchJobs: [FetchJob] = [], imageJobs: [ImageJob] = [], skipped: [String] = [])
    {
        self.records = records
        self.fetchJobs = fetchJobs
        self.imageJobs = imageJobs
        self.skipped = skipped
    }

    /// Adds a follow-up fetch job if it passes ``FetchJob/decode(json:)`` (what the fetch stage will check, made
    /// by ``FetchJob/checked()``), and is not already queued; otherwise notes it in ``skipped``.
    mutating func add(_ job: FetchJob) {
        do {
            let checked = try job.checked()
            if !self.fetchJobs.contains(checked) { self.fetchJobs.append(checked) }
        } catch {
            self.skipped.append("\(job.kind) \(job.dedupeKey.shortened(to: 120)): \(error)")
        }
    }

    /// Adds an image job if it passes ``ImageJob/decode(json:)`` (the image stage's check, made by
    /// ``ImageJob/checked()`` without building the payload) and is not already queued; otherwise notes it in
    /// ``skipped``.
    mutating func add(_ job: ImageJob) {
        do {
            let checked = try job.checked()
            if !self.imageJobs.contains(checked) { self.imageJobs.append(checked) }
        } catch {
            self.skipped.append("image \(job.url.shortened(to: 120)): \(error)")
        }
    }
}
