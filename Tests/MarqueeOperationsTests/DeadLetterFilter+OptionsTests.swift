import MarqueeOperations
import Testing

@Suite struct DeadLetterFilterOptionsTests {
    let layout = try! PipelineLayout(settings: [:])
    let now = DeadLetterFilterTests.now

    func filter(
        stages: [String] = [],
        kinds: [String] = [],
        errorKinds: [String] = [],
        grep: String? = nil,
        since: String? = nil,
        until: String? = nil
    ) throws(OperationsError) -> DeadLetterFilter {
        try DeadLetterFilter(
            stages: stages,
            kinds: kinds,
            errorKinds: errorKinds,
            errorText: grep,
            since: since,
            until: until,
            layout: self.layout,
            nowMilliseconds: self.now
        )
    }

    @Test func repeatedAndCommaSeparatedValuesMakeOneSet() throws {
        let filter = try self.filter(
            stages: ["fetch, images", " "],
            kinds: ["tmdb.movie,image", "tmdb.movie"],
            errorKinds: ["poison,unknown"],
            grep: "404",
            since: "2h",
            until: "2026-11-22"
        )
        #expect(filter.stages == ["fetch", "images"])
        #expect(filter.kinds == ["tmdb.movie", "image"])
        #expect(filter.errorKinds == ["poison", "unknown"])
        #expect(filter.errorText == "404")
        #expect(filter.since == self.now - 7_200_000)
        #expect(filter.until == 1_795_305_600_000)
        #expect(!filter.includesPurged)
        #expect(try self.filter(grep: "").errorText == nil)
        #expect(try self.filter().selectsEverything)
    }

    @Test func anUnknownStageErrorKindOrTimeNamesTheOption() {
        #expect(throws: OperationsError.self) { try self.filter(stages: ["fetch", "videos"]) }
        do {
            _ = try self.filter(stages: ["videos"])
            Issue.record("the stage 'videos' was taken")
        } catch {
            #expect(error.description == "--stage: no stage 'videos' (stages: fetch, images, records)")
        }
        do {
            _ = try self.filter(errorKinds: ["fatal"])
            Issue.record("the error kind 'fatal' was taken")
        } catch {
            #expect(error.description == "--error-kind: 'fatal' is not one of transient, permanent, poison, unknown")
        }
        do {
            _ = try self.filter(since: "yesterday")
            Issue.record("'yesterday' was read as a time")
        } catch {
            #expect(error.description.hasPrefix("'yesterday' is not a time"))
        }
    }
}
