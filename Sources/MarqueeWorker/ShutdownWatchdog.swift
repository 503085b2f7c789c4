import Dispatch
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The last guard of a worker's exit: once shutdown begins, the process has `deadline` to end; past it, the
/// watchdog logs what it does and exits with status 70 (`EX_SOFTWARE`).
///
/// The stage already bounds its jobs (``StageConfiguration/shutdownTimeout``, then
/// ``StageConfiguration/cancellationGrace``, then it leaves behind what ignores cancellation), so the watchdog
/// fires only when something after the jobs hangs: leaving the group, the producer's flush, closing the store.
/// What the worker had not committed runs again elsewhere, as after a crash.
final class ShutdownWatchdog: Service, Sendable {
    private let deadline: Duration
    private let logger: Logger
    private let state = Mutex((armed: false, disarmed: false))

    init(deadline: Duration, logger: Logger) {
        self.deadline = deadline
        self.logger = logger
    }

    /// Returns as soon as graceful shutdown begins (or the group is cancelled), with the watchdog armed.
    func run() async {
        try? await gracefulShutdown()
        self.arm()
    }

    /// Starts the countdown (once).
    func arm() {
        let armed = self.state.withLock { state in
            guard !state.armed else { return false }
            state.armed = true
            return true
        }
        guard armed else { return }
        let components = self.deadline.components
        let nanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
            guard !self.state.withLock({ $0.disarmed }) else { return }
            self.logger.critical(
                "the worker did not stop within \(self.deadline) of its shutdown: exiting now (what it had not committed runs again elsewhere)"
            )
            _exit(70)
        }
    }

    /// Stops the countdown: the worker stopped in time.
    func disarm() {
        self.state.withLock { $0.disarmed = true }
    }
}
