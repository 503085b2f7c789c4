import Logging
import MarqueeKafka
import MarqueePipeline
import Testing

@testable import MarqueeWorker

@Suite struct ShutdownWatchdogTests {
    @Test func aWorkerStillRunningPastItsExitDeadlineExitsWithStatus70() async {
        await #expect(processExitsWith: .exitCode(70)) {
            let watchdog = ShutdownWatchdog(deadline: .milliseconds(200), logger: Logger(label: "test"))
            watchdog.arm()
            try? await Task.sleep(for: .seconds(30))  // a shutdown that hangs
        }
    }

    @Test func aWorkerThatStoppedInTimeIsLeftAlone() async {
        await #expect(processExitsWith: .success) {
            let watchdog = ShutdownWatchdog(deadline: .milliseconds(200), logger: Logger(label: "test"))
            watchdog.arm()
            watchdog.disarm()
            try? await Task.sleep(for: .milliseconds(600))  // past the deadline
        }
    }

    @Test func theExitDeadlineCoversTheJobsTheirGraceAndAMinuteToClose() {
        var configuration = StageConfiguration(stage: "fetch", kafka: KafkaConfiguration(brokers: "127.0.0.1:1"))
        configuration.shutdownTimeout = .seconds(30)
        configuration.cancellationGrace = .seconds(5)
        #expect(WorkerRunner.exitDeadline(for: configuration) == .seconds(95))
    }
}
