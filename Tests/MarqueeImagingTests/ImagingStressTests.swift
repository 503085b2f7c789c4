import Testing

import class Foundation.ProcessInfo

@_spi(Testing) @testable import MarqueeImaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The imaging path from every thread of a processor's pool at once.
///
/// libvips 8.14 compiles ORC programs for every vertical reduce it builds and frees them with the operation, and
/// ORC 0.4.33 changes its code allocator's chunk list outside its lock: from two threads at once it corrupts the
/// list (a SIGSEGV in liborc, a SIGABRT from malloc, or a thread looping forever), as `make bench-e2e` met. Each
/// stress runs in a child process, so a crash fails the test instead of ending the test run.
@Suite(.serialized)
struct ImagingStressTests {
    @Test func libvipsORCVectorCodeIsOffOnceStarted() throws {
        try ImageProcessor.globalInit()
        // libvips 8.14 (Debian 12) vectorises with ORC; from 8.15 it uses Highway, compiled ahead of time, and
        // keeps its vector paths.
        if Vips.vectorUsesORC {
            #expect(!Vips.isVectorEnabled)
        }
    }

    /// 100 small posters, each made into ten variants (widths 8…16 and 64: `vips_reduce` by 4 to 8, its longest
    /// kernels, so the most ORC programs), all submitted at once to a pool of one thread per core (at least two),
    /// in each of up to 12 fresh processes, stopping at the first that fails. With ORC on, this test failed 12 of
    /// 24 runs on a loaded 2-core machine; with it off, none of 21 (docs/imaging.md, "Vector code (ORC) is off").
    @Test(.timeLimit(.minutes(5)))
    func everyPoolThreadRunsThePathAtOnce() async {
        for _ in 0..<12 {
            let result = await #expect(processExitsWith: .success) {
                // A corrupted ORC chunk list can also loop forever: end the child then, rather than the CI job.
                alarm(60)
                let posters = try ImagingStress.posters(count: 100, width: 64, height: 96)
                let threads = max(2, ProcessInfo.processInfo.activeProcessorCount)
                let report = try await ImagingStress.run(
                    posters,
                    configuration: ImagingStress.configuration(threads: threads, posterWidth: 64)
                )
                guard report.processed == 100 else { exit(EXIT_FAILURE) }
            }
            guard result?.exitStatus == .exitCode(EXIT_SUCCESS) else { break }
        }
    }
}
