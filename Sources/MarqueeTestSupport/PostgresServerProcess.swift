import Synchronization

import struct Foundation.Data
import struct Foundation.Date
import struct Foundation.FileAttributeKey
import class Foundation.FileHandle
import class Foundation.FileManager
import class Foundation.ProcessInfo
import class Foundation.Thread
import struct Foundation.URL

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server owned by one test: a fresh cluster in its own folder under /tmp, listening on 127.0.0.1
/// and a free port, that the test may stop, crash and restart while other suites keep using the shared stack.
///
/// The cluster is made with `initdb --auth=trust --username=marquee -E UTF8 --locale=C.UTF-8` and runs with
/// `fsync=off`, `synchronous_commit=off` and `full_page_writes=off` (like `scripts/stack.sh`); the database
/// `marquee` exists once ``start(settings:timeout:)`` returns. PostgreSQL refuses to run as root, so when the
/// tests run as root the folder belongs to `postgres` and `initdb`, `pg_ctl` and the server run as `postgres`
/// through `runuser -u postgres --`. `psql` runs as the test's own user, over TCP.
///
/// ```swift
/// let postgres = try await PostgresServerProcess.start()
/// // connect to postgres.url: postgres://marquee@127.0.0.1:PORT/marquee
/// try await postgres.stop()        // connections are refused from here on
/// try await postgres.restart()     // same data, same port
/// let count = try await postgres.psql("SELECT count(*) FROM jobs")
/// await postgres.shutdown()        // stops it and deletes its folder
/// ```
///
/// - Important: Call ``shutdown()`` when done, also when the test fails. `pg_ctl` detaches the server from the
///   test process, so a test run that dies (a crash, a time limit, `kill -9`) leaves it running. Each folder is
///   named `/tmp/marquee-pgtest-<PID of the test process>-XXXXXX`, and every ``start(settings:timeout:)`` first
///   calls ``removeAbandonedServers()``: servers whose test process is gone are shut down and their folders
///   deleted, so such a leftover lives at most until the next test run that starts one.
public final class PostgresServerProcess: Sendable {
    /// A failure to start, stop or talk to the server.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong: the command, its exit status and the end of its standard error (and of the server's
        /// log when the server is involved).
        public let description: String
        /// The failed command's exit status (or the number of the signal that ended it), if a command failed.
        public let exitStatus: Int32?
        /// The failed command's standard error, if a command failed.
        public let standardError: String

        init(_ description: String, exitStatus: Int32? = nil, standardError: String = "") {
            self.description = description
            self.exitStatus = exitStatus
            self.standardError = standardError
        }
    }

    /// The role every connection uses (a superuser; trust authentication, so no password).
    public static let user = "marquee"
    /// The database ``start(settings:timeout:)`` creates.
    public static let database = "marquee"
    /// The prefix of every server's folder, followed by the test process's PID (see ``removeAbandonedServers()``).
    public static var folderPrefix: String { Self.folderParent + "/" + Self.folderNamePrefix }
    private static let folderParent = "/tmp"
    private static let folderNamePrefix = "marquee-pgtest-"

    /// The TCP port on 127.0.0.1; the same across ``restart(timeout:)``.
    public let port: Int
    /// The folder holding the cluster (`data/`), the server log (`postgres.log`) and the unix socket.
    public let folder: String
    private let tools: Tools

    /// `postgres://marquee@127.0.0.1:<port>/marquee`.
    public var url: String { "postgres://\(Self.user)@127.0.0.1:\(self.port)/\(Self.database)" }
    /// The cluster's data folder.
    public var dataFolder: String { self.folder + "/data" }
    /// The server's log (standard output and error of every run, appended).
    public var logPath: String { self.folder + "/postgres.log" }

    /// Whether the server's postmaster process exists (running, starting or shutting down).
    public var isRunning: Bool { Self.runningPostmaster(dataFolder: self.dataFolder) != nil }

    private init(port: Int, folder: String, tools: Tools) {
        self.port = port
        self.folder = folder
        self.tools = tools
    }

    // MARK: - Lifecycle

    /// Creates a cluster in a new folder under /tmp, starts it on a free port of 127.0.0.1, waits until it
    /// accepts connections and creates the database `marquee`.
    ///
    /// Servers abandoned by test processes that are gone are removed first (``removeAbandonedServers()``).
    ///
    /// - Parameters:
    ///   - settings: More server settings, written to `postgresql.conf` after the defaults, so they win, e.g.
    ///     `["synchronous_commit": "on"]` for a test that counts on commits surviving ``kill()``.
    ///   - timeout: How long each step (`initdb`, the server's start) may take.
    /// - Returns: The running server.
    /// - Throws: ``Failure`` when PostgreSQL is not installed, or a step fails or times out; the folder is
    ///   deleted then.
    public static func start(
        settings: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> PostgresServerProcess {
        try await self.start(owner: getpid(), settings: settings, timeout: timeout)
    }

    /// ``start(settings:timeout:)`` for a server recorded as belonging to the process `owner` rather than this
    /// one, to test ``removeAbandonedServers()`` with an `owner` that does not exist.
    public static func _start(
        owner: Int32,
        settings: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> PostgresServerProcess {
        try await self.start(owner: owner, settings: settings, timeout: timeout)
    }

    private static func start(
        owner: pid_t,
        settings: [String: String],
        timeout: Duration
    ) async throws -> PostgresServerProcess {
        let tools = try Tools.find()
        await self.removeAbandonedServers()
        let folder = try tools.makeFolder(owner: owner)
        do {
            let data = folder + "/data"
            try await tools.server(
                "initdb",
                [
                    "-D", data, "--auth=trust", "--username=\(Self.user)", "-E", "UTF8", "--locale=C.UTF-8",
                    "--no-sync",
                ]
            ).run(in: folder, timeout: timeout)
            let configuration = data + "/postgresql.conf"
            let defaults = try Self.read(configuration)
            var lastError: (any Error)?
            // The port is free when chosen but could be taken before the server binds it; try a few.
            for _ in 0..<3 {
                let port = try MotoServerProcess.freePort()
                try Self.overwrite(
                    configuration,
                    with: defaults + Self.settings(port: port, socketFolder: folder, extra: settings)
                )
                let server = PostgresServerProcess(port: port, folder: folder, tools: tools)
                do {
                    try await server.startServer(timeout: timeout)
                } catch {
                    lastError = error
                    if server.logTail().contains("Address already in use") { continue }
                    throw error
                }
                _ = try await server.psql("CREATE DATABASE \(Self.database)", database: "postgres")
                return server
            }
            throw lastError ?? Failure("PostgreSQL did not start")
        } catch {
            // A server that started but failed afterwards must not outlive its folder.
            if let pid = Self.runningPostmaster(dataFolder: folder + "/data") {
                _ = Glibc.kill(pid, SIGQUIT)
                await Self.waitUntilGone([pid], timeout: .seconds(10))
            }
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Stops the server with a fast shutdown (`pg_ctl stop -m fast -w`): open sessions are ended, committed
    /// work is kept, and connections are refused once this returns. Does nothing when it is not running.
    ///
    /// - Parameter timeout: How long the shutdown may take.
    /// - Throws: ``Failure`` when `pg_ctl` fails or times out.
    public func stop(timeout: Duration = .seconds(60)) async throws {
        guard self.isRunning else { return }
        try await self.tools.server(
            "pg_ctl",
            ["stop", "-D", self.dataFolder, "-m", "fast", "-w", "-t", Self.seconds(timeout)]
        ).run(in: self.folder, timeout: timeout + .seconds(5))
    }

    /// Crashes the server: SIGKILL to the postmaster and all its children at once, as if the machine lost power
    /// (except that what reached the operating system stays). Returns once those processes are gone. Does
    /// nothing when it is not running.
    ///
    /// ``restart(timeout:)`` then runs crash recovery.
    ///
    /// - Important: With the default `synchronous_commit=off`, a commit is acknowledged before its WAL is
    ///   written, so the last few hundred milliseconds of acknowledged commits may be lost. Start the server
    ///   with `settings: ["synchronous_commit": "on"]` to test that committed work survives a crash.
    public func kill() async {
        guard let postmaster = Self.runningPostmaster(dataFolder: self.dataFolder) else { return }
        // Frozen, the postmaster starts no new child between the listing and the kill.
        _ = Glibc.kill(postmaster, SIGSTOP)
        let children = Self.children(of: postmaster)
        for child in children { _ = Glibc.kill(child, SIGKILL) }
        _ = Glibc.kill(postmaster, SIGKILL)
        await Self.waitUntilGone([postmaster] + children, timeout: .seconds(10))
        // The dead postmaster stays a zombie until init reaps it (a second here; never, where PID 1 does not
        // reap), and PostgreSQL takes a lock file naming a zombie for a running server's: remove its lock files
        // (and its shared memory, which a machine crash would not leave behind either).
        Self.removeOrphanedSharedMemory(dataFolder: self.dataFolder)
        try? FileManager.default.removeItem(atPath: self.dataFolder + "/postmaster.pid")
        try? FileManager.default.removeItem(atPath: self.folder + "/.s.PGSQL.\(self.port).lock")
    }

    /// Freezes the server (SIGSTOP to the postmaster and every child): connections stay open and nothing answers
    /// on them, as with a server that hangs or a network that drops packets without a reset. ``thaw()`` undoes it.
    public func freeze() {
        guard let postmaster = Self.runningPostmaster(dataFolder: self.dataFolder) else { return }
        _ = Glibc.kill(postmaster, SIGSTOP)
        for child in Self.children(of: postmaster) { _ = Glibc.kill(child, SIGSTOP) }
    }

    /// Continues a server ``freeze()`` stopped.
    public func thaw() {
        guard let postmaster = Self.runningPostmaster(dataFolder: self.dataFolder) else { return }
        for child in Self.children(of: postmaster) { _ = Glibc.kill(child, SIGCONT) }
        _ = Glibc.kill(postmaster, SIGCONT)
    }

    /// Starts the server again on the same data folder and the same port (stopping it first when it runs), and
    /// waits until it accepts connections.
    ///
    /// - Parameter timeout: How long the stop and the start may take, each.
    /// - Throws: ``Failure`` when the server does not come up in time, e.g. because something else took the
    ///   port meanwhile; its description ends with the server log's last lines.
    public func restart(timeout: Duration = .seconds(60)) async throws {
        try await self.stop(timeout: timeout)
        try await self.startServer(timeout: timeout)
    }

    /// Stops the server (fast shutdown, else ``kill()``) and deletes its folder. Safe to call more than once.
    public func shutdown() async {
        if self.isRunning {
            do {
                try await self.stop(timeout: .seconds(30))
            } catch {
                await self.kill()
            }
        }
        Self.removeOrphanedSharedMemory(dataFolder: self.dataFolder)
        try? FileManager.default.removeItem(atPath: self.folder)
    }

    /// Removes the servers of test processes that are gone: shuts each one down (immediate shutdown, SIGQUIT),
    /// kills whatever else still works in its folder (an `initdb` the test process died during) and deletes the
    /// folder.
    ///
    /// A folder `/tmp/marquee-pgtest-<PID>-XXXXXX` is abandoned when no process `<PID>` runs. Servers of running
    /// test processes (this one or others running in parallel) are left alone, and so is a folder changed less
    /// than `minimumAge` ago (a server still being set up, such as the abandoned-on-purpose one of
    /// `PostgresServerProcessTests`, which a parallel ``start(settings:timeout:)`` must not remove mid-`initdb`).
    /// ``start(settings:timeout:)`` calls this first.
    public static func removeAbandonedServers(minimumAge: Duration = .seconds(60)) async {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: Self.folderParent) else { return }
        let now = Date()
        for name in names where name.hasPrefix(Self.folderNamePrefix) {
            let rest = name.dropFirst(Self.folderNamePrefix.count)
            guard let owner = rest.split(separator: "-").first.flatMap({ pid_t($0) }), owner != getpid(),
                !Self.isAlive(owner)
            else { continue }
            let folder = Self.folderParent + "/" + name
            let changed = (try? FileManager.default.attributesOfItem(atPath: folder)[.modificationDate] as? Date) ?? now
            guard now.timeIntervalSince(changed) >= Double(minimumAge.components.seconds) else { continue }
            let data = folder + "/data"
            if let postmaster = Self.runningPostmaster(dataFolder: data) {
                // Immediate shutdown: the postmaster ends its children and removes its shared memory.
                _ = Glibc.kill(postmaster, SIGQUIT)
                await Self.waitUntilGone([postmaster], timeout: .seconds(10))
            }
            // Whatever still works in the folder: a server that did not stop, or an initdb or pg_ctl that was
            // running when the test process died (it would write on while the folder is deleted).
            let leftovers = Self.processes(in: folder)
            for pid in leftovers { _ = Glibc.kill(pid, SIGKILL) }
            await Self.waitUntilGone(leftovers, timeout: .seconds(5))
            Self.removeOrphanedSharedMemory(dataFolder: data)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    // MARK: - Queries

    /// Runs `sql` with `psql` and returns what it printed: tuples only, unaligned (`-tA`), so one line per row
    /// with columns separated by `|`, without the final newline.
    ///
    /// With several statements separated by `;`, only the last one's rows are printed. The connection is the
    /// test's own, independent of the code under test.
    ///
    /// - Parameters:
    ///   - sql: The statements.
    ///   - database: The database to connect to.
    /// - Returns: The rows, `""` for none.
    /// - Throws: ``Failure`` when `psql` fails: the connection is refused, or a statement fails
    ///   (``Failure/standardError`` holds PostgreSQL's message).
    public func psql(_ sql: String, database: String = PostgresServerProcess.database) async throws -> String {
        let output = try await self.tools.client(
            "psql",
            [
                "-X", "-h", "127.0.0.1", "-p", "\(self.port)", "-U", Self.user, "-d", database, "-tA",
                "-v", "ON_ERROR_STOP=1", "-c", sql,
            ],
            shown: "psql -c \"\(sql.count > 80 ? String(sql.prefix(80)) + "…" : sql)\""
        ).run(in: "/", timeout: .seconds(300))
        // Every row ends with a newline; an empty last row stays.
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    // MARK: - Server

    private func startServer(timeout: Duration) async throws {
        do {
            try await self.tools.server(
                "pg_ctl",
                ["start", "-D", self.dataFolder, "-l", self.logPath, "-w", "-t", Self.seconds(timeout)]
            ).run(in: self.folder, timeout: timeout + .seconds(5))
        } catch let failure as Failure {
            throw Failure(
                "PostgreSQL did not start on 127.0.0.1:\(self.port) (waiting at most \(timeout) for it to accept "
                    + "connections): \(failure.description)\nlast lines of \(self.logPath):\n\(self.logTail())",
                exitStatus: failure.exitStatus,
                standardError: failure.standardError
            )
        }
    }

    /// The server log's last lines.
    private func logTail(lines: Int = 20) -> String {
        guard let text = try? Self.read(self.logPath) else { return "(no log)" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// The settings appended to `postgresql.conf`: 127.0.0.1 only, the socket in the folder, durability off.
    private static func settings(port: Int, socketFolder: String, extra: [String: String]) -> String {
        var settings: [(String, String)] = [
            ("listen_addresses", "127.0.0.1"),
            ("port", "\(port)"),
            ("unix_socket_directories", socketFolder),
            ("fsync", "off"),
            ("synchronous_commit", "off"),
            ("full_page_writes", "off"),
        ]
        settings += extra.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let lines = settings.map { "\($0.0) = '\($0.1.replacing("'", with: "''"))'" }
        return "\n# PostgresServerProcess (MarqueeTestSupport)\n" + lines.joined(separator: "\n") + "\n"
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(max(1, seconds + (attoseconds > 0 ? 1 : 0)))"
    }

    // MARK: - Processes

    /// The postmaster's PID from `postmaster.pid`, if that process runs in `dataFolder` (a PID file left by a
    /// crash may name a process that is gone, or a new process that got its PID).
    private static func runningPostmaster(dataFolder: String) -> pid_t? {
        guard let text = try? Self.read(dataFolder + "/postmaster.pid"),
            let line = text.split(separator: "\n").first,
            let pid = pid_t(line.trimmingPrefix(" ")), pid > 0, Self.isAlive(pid)
        else { return nil }
        // The postmaster works in its data folder.
        guard let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd"),
            cwd == dataFolder || cwd == URL(fileURLWithPath: dataFolder).resolvingSymlinksInPath().path
        else { return nil }
        return pid
    }

    /// Whether `pid` exists and is not a zombie (processes that are not this one's children may stay zombies
    /// until init reaps them).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? Self.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        // "PID (COMMAND) STATE PPID …"
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state != nil && state != "Z" && state != "X"
    }

    /// The processes working in `folder` or a folder inside it (PostgreSQL's programs work in the server's folder
    /// or its data folder).
    private static func processes(in folder: String) -> [pid_t] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name),
                let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd"),
                cwd == folder || cwd.hasPrefix(folder + "/") || cwd == folder + " (deleted)"
            else { return nil }
            return pid
        }
    }

    /// The processes whose parent is `parent`.
    private static func children(of parent: pid_t) -> [pid_t] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), let stat = try? Self.read("/proc/\(pid)/stat"),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// Waits until none of `pids` is alive; false when `timeout` passed first.
    ///
    /// The processes are not this one's children, so there is nothing to wait on: polls every 10 ms.
    @discardableResult
    private static func waitUntilGone(_ pids: [pid_t], timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while pids.contains(where: Self.isAlive) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Removes the System V shared memory block of a server that was killed, which PostgreSQL would otherwise
    /// remove only on its next start in this folder (`postmaster.pid`'s 7th line: key and ID). Only a block that
    /// nothing is attached to is removed.
    private static func removeOrphanedSharedMemory(dataFolder: String) {
        guard Self.runningPostmaster(dataFolder: dataFolder) == nil,
            let text = try? Self.read(dataFolder + "/postmaster.pid")
        else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 6 else { return }
        let fields = lines[6].split(separator: " ")
        guard fields.count == 2, let id = Int32(fields[1]) else { return }
        var status = shmid_ds()
        guard shmctl(id, IPC_STAT, &status) == 0, status.shm_nattch == 0 else { return }
        _ = shmctl(id, IPC_RMID, nil)
    }

    // MARK: - Files

    private static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure("cannot read \(path)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// Replaces the contents of `path` in place, so its owner (`postgres`) and mode stay.
    private static func overwrite(_ path: String, with text: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw Failure("cannot write \(path)") }
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
    }
}

// MARK: - Tools

/// PostgreSQL's programs, and how to run them: the server's as `postgres` when this process is root.
private struct Tools: Sendable {
    /// `/usr/lib/postgresql/<highest version>/bin`, or `MARQUEE_POSTGRES_BIN`.
    let bin: String
    /// `runuser`, and the `postgres` user's IDs, when this process is root.
    let runAs: (runuser: String, uid: uid_t, gid: gid_t)?

    static func find() throws -> Tools {
        let manager = FileManager.default
        let bin: String
        if let path = ProcessInfo.processInfo.environment["MARQUEE_POSTGRES_BIN"] {
            bin = path
        } else {
            let versions = (try? manager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            guard let version = versions.compactMap({ Int($0) }).max() else {
                throw PostgresServerProcess.Failure(
                    "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin): run scripts/setup.sh"
                )
            }
            bin = "/usr/lib/postgresql/\(version)/bin"
        }
        for tool in ["initdb", "pg_ctl", "postgres", "psql"] where !manager.isExecutableFile(atPath: bin + "/" + tool) {
            throw PostgresServerProcess.Failure("\(bin)/\(tool) is missing")
        }
        guard getuid() == 0 else { return Tools(bin: bin, runAs: nil) }
        // PostgreSQL refuses to run as root.
        guard
            let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first(
                where: manager.isExecutableFile
            )
        else { throw PostgresServerProcess.Failure("running as root, but runuser is missing") }
        guard let user = getpwnam("postgres") else {
            throw PostgresServerProcess.Failure("running as root, but there is no user postgres to run PostgreSQL")
        }
        return Tools(bin: bin, runAs: (runuser, user.pointee.pw_uid, user.pointee.pw_gid))
    }

    /// Creates `/tmp/marquee-pgtest-<owner>-XXXXXX`, owned by `postgres` when this process is root.
    func makeFolder(owner: pid_t) throws -> String {
        var template = Array("\(PostgresServerProcess.folderPrefix)\(owner)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw PostgresServerProcess.Failure("cannot create a folder in /tmp: errno \(errno)")
        }
        let folder = String(cString: created)
        if let runAs = self.runAs, chown(folder, runAs.uid, runAs.gid) != 0 {
            let error = errno
            try? FileManager.default.removeItem(atPath: folder)
            throw PostgresServerProcess.Failure("cannot give \(folder) to postgres: errno \(error)")
        }
        return folder
    }

    /// `initdb`, `pg_ctl`: run as `postgres` when this process is root.
    func server(_ tool: String, _ arguments: [String]) -> Command {
        let shown = arguments.first.map { $0.hasPrefix("-") ? tool : tool + " " + $0 } ?? tool
        guard let runAs = self.runAs else {
            return Command(executable: self.bin + "/" + tool, arguments: arguments, shown: shown)
        }
        return Command(
            executable: runAs.runuser,
            arguments: ["-u", "postgres", "--", self.bin + "/" + tool] + arguments,
            shown: shown + " (as postgres)"
        )
    }

    /// `psql`: run as this process's user.
    func client(_ tool: String, _ arguments: [String], shown: String) -> Command {
        Command(executable: self.bin + "/" + tool, arguments: arguments, shown: shown)
    }
}

/// A command run to completion, its output collected.
///
/// Not with Foundation's `Process`: it learns that its child ended when the end of a socket pair that the child
/// inherits is closed by every holder, and `pg_ctl start` leaves the postmaster holding it, so `Process` would
/// never report `pg_ctl`'s exit. This spawns with every descriptor above standard error closed, sends output
/// to unlinked files (no pipe to drain while waiting), and reaps the child on a thread of its own.
private struct Command: Sendable {
    let executable: String
    let arguments: [String]
    /// How failures name it, e.g. `pg_ctl start (as postgres)`.
    let shown: String

    /// The environment without `PG*` variables (which would override the arguments' connection settings),
    /// with a connection timeout.
    private static let environment: [String] = {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
        environment["PGCONNECT_TIMEOUT"] = "10"
        return environment.map { "\($0.key)=\($0.value)" }
    }()

    /// Runs the command in `folder` and returns its standard output.
    ///
    /// - Throws: ``PostgresServerProcess/Failure`` when it cannot start, exits with a status other than 0, or
    ///   runs past `timeout` (it is killed then); `CancellationError` when the task is cancelled (it is killed
    ///   too).
    @discardableResult
    func run(in folder: String, timeout: Duration) async throws -> String {
        let output = try OutputFile()
        let errors = try OutputFile()
        let child = try ChildExit(pid: self.spawn(in: folder, output: output.descriptor, errors: errors.descriptor))
        let (status, isTimedOut) = await child.wait(timeout: timeout)
        try Task.checkCancellation()
        let standardError = String(decoding: errors.contents(), as: UTF8.self)
        guard !isTimedOut else {
            throw PostgresServerProcess.Failure(
                "\(self.shown) did not finish within \(timeout) and was killed: \(Self.tail(standardError))",
                standardError: standardError
            )
        }
        switch status {
        case .exited(0):
            return String(decoding: output.contents(), as: UTF8.self)
        case .exited(let code), .signalled(let code):
            let ending =
                if case .exited = status { "exited with status \(code)" } else { "was ended by signal \(code)" }
            throw PostgresServerProcess.Failure(
                "\(self.shown) \(ending): \(Self.tail(standardError))",
                exitStatus: code,
                standardError: standardError
            )
        case .unknown(let error):
            throw PostgresServerProcess.Failure("\(self.shown): cannot learn its exit status (errno \(error))")
        }
    }

    /// `posix_spawn` with standard input from /dev/null, standard output and error to the given descriptors,
    /// every other descriptor closed, the working folder `folder` (`postgres` may not enter the test's own), and
    /// a clean signal mask and default signal actions (the test process blocks some signals).
    private func spawn(in folder: String, output: Int32, errors: Int32) throws -> pid_t {
        func check(_ result: Int32, _ what: String) throws {
            guard result == 0 else {
                throw PostgresServerProcess.Failure("cannot run \(self.executable): \(what): errno \(result)")
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "open /dev/null")
        try check(posix_spawn_file_actions_adddup2(&actions, output, 1), "dup2")
        try check(posix_spawn_file_actions_adddup2(&actions, errors, 2), "dup2")
        try check(GlibcSpawnExtensions.addCloseFrom(&actions, 3), "closefrom")
        try check(GlibcSpawnExtensions.addChangeDirectory(&actions, folder), "chdir \(folder)")

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        try check(posix_spawnattr_setsigmask(&attributes, &mask), "signal mask")
        try check(posix_spawnattr_setsigdefault(&attributes, &defaults), "signal defaults")
        try check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)), "flags")

        // strdup'd C strings, freed once spawned.
        let argv: [UnsafeMutablePointer<CChar>?] = ([self.executable] + self.arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = Self.environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, self.executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw PostgresServerProcess.Failure("cannot run \(self.executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    private static func tail(_ text: String) -> String {
        let trimmed = text.split(separator: "\n").suffix(10).joined(separator: "\n")
        return trimmed.isEmpty ? "(nothing on standard error)" : trimmed
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34) and `posix_spawn_file_actions_addchdir_np` (2.29),
/// which its headers declare only for `_GNU_SOURCE`, so the Glibc module does not have them: looked up by name.
private enum GlibcSpawnExtensions {
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ descriptor: Int32) -> Int32
    {
        guard let symbol = self.symbol("posix_spawn_file_actions_addclosefrom_np") else { return ENOSYS }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)(actions, descriptor)
    }

    static func addChangeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32
    {
        guard let symbol = self.symbol("posix_spawn_file_actions_addchdir_np") else { return ENOSYS }
        return path.withCString { unsafeBitCast(symbol, to: AddChangeDirectory.self)(actions, $0) }
    }

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        // dlopen(NULL) is the running program, with libc loaded; the handle needs no closing.
        dlsym(dlopen(nil, RTLD_NOW), name)
    }
}

/// An unlinked temporary file that a child writes its output to; closed (and so gone) at the end of its scope.
private struct OutputFile: ~Copyable {
    let descriptor: Int32

    init() throws {
        var template = Array("/tmp/marquee-pgcmd-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            throw PostgresServerProcess.Failure("cannot create a file in /tmp: errno \(errno)")
        }
        unlink(&template)
        // Not for other children of this process (the spawned child gets it through dup2, which clears the flag).
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
    }

    /// Everything written so far.
    func contents() -> [UInt8] {
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(self.descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return contents }
            contents.append(contentsOf: buffer[..<count])
            offset += off_t(count)
        }
    }

    deinit {
        Glibc.close(self.descriptor)
    }
}

/// The exit of a spawned child, reaped on a thread of its own (`waitpid` blocks).
private final class ChildExit: Sendable {
    enum Status: Sendable {
        case exited(Int32)
        case signalled(Int32)
        /// `waitpid` failed (someone else reaped the child): its errno.
        case unknown(Int32)
    }

    private struct State {
        /// Set once the child has exited and before it is reaped: its PID may not be signalled from then on.
        var hasExited = false
        var status: Status?
        var waiter: CheckedContinuation<Status, Never>?
    }

    private let pid: pid_t
    private let state = Mutex(State())

    init(pid: pid_t) {
        self.pid = pid
        Thread { [self] in self.reap() }.start()
    }

    private func reap() {
        var info = siginfo_t()
        // Wait for the exit but leave the child a zombie, so its PID stays taken until kill() can no longer use it.
        while waitid(P_PID, id_t(self.pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        self.state.withLock { $0.hasExited = true }
        var raw: Int32 = 0
        var reaped = waitpid(self.pid, &raw, 0)
        while reaped == -1 && errno == EINTR { reaped = waitpid(self.pid, &raw, 0) }
        // <sys/wait.h>'s macros, which Swift does not import: the low 7 bits are the signal, 0 for an exit.
        let status: Status =
            if reaped == -1 { .unknown(errno) } else if raw & 0x7f == 0 { .exited((raw >> 8) & 0xff) } else {
                .signalled(raw & 0x7f)
            }
        let waiter = self.state.withLock { state -> CheckedContinuation<Status, Never>? in
            state.status = status
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: status)
    }

    /// SIGKILL, unless the child has exited already.
    func kill() {
        self.state.withLock { state in
            if !state.hasExited { _ = Glibc.kill(self.pid, SIGKILL) }
        }
    }

    /// The child's exit status; at `timeout`, or when the task is cancelled, kills it first (`isTimedOut`).
    func wait(timeout: Duration) async -> (status: Status, isTimedOut: Bool) {
        await withTaskGroup(of: Status?.self) { group in
            group.addTask { await self.status() }
            group.addTask {
                try? await Task.sleep(for: timeout)  // a deadline, not synchronisation
                return nil
            }
            if let status = await group.next() ?? nil {
                group.cancelAll()
                return (status, false)
            }
            self.kill()
            // The child dies of SIGKILL, so its status comes.
            return (await group.next().flatMap { $0 } ?? .unknown(0), true)
        }
    }

    private func status() async -> Status {
        await withCheckedContinuation { (continuation: CheckedContinuation<Status, Never>) in
            let status: Status? = self.state.withLock { state in
                if let status = state.status { return status }
                state.waiter = continuation
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }
}
