internal import CMarqueeCurl
internal import Ccurl
import MarqueeCore
import Synchronization

import class Foundation.Thread

/// Owns a libcurl multi handle (`CURLM *`), its easy handles, and the dedicated thread that drives them.
///
/// The thread loops on `curl_multi_poll`: it takes new transfers and cancellations from a locked inbox (tasks
/// enqueue and call `curl_multi_wakeup`, the only multi function libcurl allows from another thread), runs
/// `curl_multi_perform`, completes finished transfers by resuming their continuations, and fires the
/// ``HostLimiter``'s timed waits. No task ever blocks on libcurl.
///
/// `@unchecked Sendable` is safe because the mutable members (`transfers`, `idleHandles`) and the `CURLM *` are
/// used only by the loop thread (which ``start()`` creates after initialisation), except `curl_multi_wakeup`,
/// which is thread-safe and is called only while the handle is not yet cleaned up: under the inbox lock, or by a
/// task counted in `wakersInFlight` under that lock (`isTerminated` is set under the lock, and the loop waits for
/// the count to reach zero, before `curl_multi_cleanup`).
final class CurlMultiHandle: @unchecked Sendable {
    private enum Operation {
        case add(TransferJob, TransferTicket, TransferContinuation)
        case cancel(TransferTicket)
    }

    private struct Inbox {
        var operations: [Operation] = []
        /// No new transfer is accepted; the loop fails what remains with `.shutdown`.
        var isClosed = false
        /// The multi handle is (being) cleaned up: no more `curl_multi_wakeup`.
        var isTerminated = false
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    /// Tasks that decided under the inbox lock to wake the loop and have not returned from `curl_multi_wakeup`
    /// yet. The system call is made after the lock is released: made under it, it kept the loop and the other
    /// tasks waiting on the lock (in the kernel) for its duration (make bench-fetch).
    private let wakersInFlight = Atomic<Int>(0)
    private let configuration: HTTPFetcherConfiguration
    private let limiter: HostLimiter
    /// Fires when the loop thread has cleaned up and exited.
    let stopped = OneShotSignal()

    // Loop thread only.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [CurlEasyHandle] = []
    private static let maxIdleHandles = 64

    init(configuration: HTTPFetcherConfiguration, limiter: HostLimiter) throws(HTTPFetchError) {
        guard let multi = curl_multi_init() else {
            throw HTTPFetchError(code: .other, reason: "curl_multi_init failed (out of memory?)")
        }
        self.multi = multi
        self.configuration = configuration
        self.limiter = limiter
        let options: [(CURLMoption, Int)] = [
            (CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost),
            (CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections),
            // The idle-connection cache; libcurl's default (4 × handles) would grow with the number in flight.
            (CURLMOPT_MAXCONNECTS, max(configuration.maxTotalConnections, 1)),
            (CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
        ]
        for (option, value) in options {
            let code = CurlMultiCode(CMarqueeCurl_multi_setopt_long(multi, option, value))
            guard code.isOK else {
                curl_multi_cleanup(multi)
                throw HTTPFetchError(code: .other, reason: "curl_multi_setopt(\(option.rawValue)) failed: \(code)")
            }
        }
    }

    /// Starts the loop thread.
    func start() {
        let thread = Thread { [self] in
            self.runLoop()
            self.stopped.fire()
        }
        thread.name = "marquee-http-curl"
        thread.start()
    }

    /// Runs one hop on the loop thread and awaits its outcome.
    ///
    /// Cancelling the calling task removes the transfer from the multi handle (closing its connection) and
    /// returns ``HTTPFetchError/Code/cancelled``.
    func perform(_ job: TransferJob) async -> Result<TransferOutcome, HTTPFetchError> {
        let ticket = TransferTicket()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: TransferContinuation) in
                let (accepted, wakes) = self.inbox.withLock { inbox -> (Bool, Bool) in
                    guard !inbox.isClosed else { return (false, false) }
                    // One wakeup per batch: while operations wait, the wakeup of the first is pending, and the
                    // loop takes the whole inbox after the poll it ends (a system call less for every transfer
                    // that arrives while another waits).
                    let wakes = inbox.operations.isEmpty
                    if wakes { self.wakersInFlight.add(1, ordering: .relaxed) }
                    inbox.operations.append(.add(job, ticket, continuation))
                    return (true, wakes)
                }
                if wakes {
                    curl_multi_wakeup(self.multi)
                    self.wakersInFlight.subtract(1, ordering: .releasing)
                }
                if !accepted { continuation.resume(returning: .failure(.shutdown(url: nil))) }
            }
        } onCancel: {
            // The flag covers a cancellation that arrives before the loop took the `.add`; the operation covers
            // one that arrives after (the loop handles operations in order).
            ticket.cancel()
            self.inbox.withLock { inbox in
                guard !inbox.isClosed else { return }
                inbox.operations.append(.cancel(ticket))
                curl_multi_wakeup(self.multi)
            }
        }
    }

    /// Wakes the loop thread (e.g. to re-plan its poll timeout).
    func wakeup() {
        self.inbox.withLock { inbox in
            if !inbox.isTerminated { curl_multi_wakeup(self.multi) }
        }
    }

    /// Asks the loop to fail every transfer with ``HTTPFetchError/Code/shutdown`` and exit; returns at once.
    func close() {
        self.inbox.withLock { inbox in
            guard !inbox.isClosed else { return }
            inbox.isClosed = true
            curl_multi_wakeup(self.multi)
        }
    }

    // MARK: - Loop thread

    private func runLoop() {
        while true {
            let (operations, isClosed) = self.inbox.withLock { inbox in
                defer { inbox.operations = [] }
                return (inbox.operations, inbox.isClosed)
            }
            for operation in operations {
                switch operation {
                case .add(_, _, let continuation) where isClosed:
                    continuation.resume(returning: .failure(.shutdown(url: nil)))
                case .add(let job, let ticket, let continuation):
                    self.start(job, ticket: ticket, continuation: continuation)
                case .cancel(let ticket):
                    self.cancel(ticket)
                }
            }
            if isClosed {
                self.terminate()
                return
            }

            var running: Int32 = 0
            let performed = CurlMultiCode(curl_multi_perform(self.multi, &running))
            precondition(performed.isOK, "curl_multi_perform failed: \(performed)")
            self.completeFinishedTransfers()

            // Sleep until a socket is ready, libcurl's own timer, a wakeup, or the limiter's next timed wait.
            var timeout = 1000
            if let deadline = self.limiter.fireDue(now: .now) {
                timeout = min(timeout, (deadline - .now).roundedUpMilliseconds)
            }
            let polled = CurlMultiCode(curl_multi_poll(self.multi, nil, 0, Int32(timeout), nil))
            precondition(polled.isOK, "curl_multi_poll failed: \(polled)")
        }
    }

    private func start(_ job: TransferJob, ticket: TransferTicket, continuation: TransferContinuation) {
        if ticket.isCancelled {
            continuation.resume(returning: .failure(.cancelled(url: nil)))
            return
        }
        let easy: CurlEasyHandle
        if let idle = self.idleHandles.popLast() {
            easy = idle
        } else {
            do throws(HTTPFetchError) {
                easy = try CurlEasyHandle()
            } catch {
                continuation.resume(returning: .failure(error))
                return
            }
        }
        easy.reset()
        let transfer = CurlTransfer(
            ticket: ticket,
            continuation: continuation,
            easy: easy,
            maxBodyBytes: job.maxBodyBytes
        )
        do throws(HTTPFetchError) {
            try self.configure(easy, for: job, transfer: transfer)
        } catch {
            self.recycle(easy, after: transfer)
            continuation.resume(returning: .failure(error))
            return
        }
        let added = CurlMultiCode(curl_multi_add_handle(self.multi, easy.raw))
        guard added.isOK else {
            self.recycle(easy, after: transfer)
            continuation.resume(
                returning: .failure(HTTPFetchError(code: .other, reason: "curl_multi_add_handle failed: \(added)"))
            )
            return
        }
        self.transfers[easy.raw] = transfer
    }

    private func configure(
        _ easy: CurlEasyHandle,
        for job: TransferJob,
        transfer: CurlTransfer
    ) throws(HTTPFetchError) {
        let configuration = self.configuration
        try easy.set(CURLOPT_URL, job.url)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Signals are process-wide; libcurl must not use them (alarm-based DNS timeouts) from this thread.
        try easy.set(CURLOPT_NOSIGNAL, true)
        switch job.method {
        case .get:
            try easy.set(CURLOPT_HTTPGET, true)
        case .head:
            // A HEAD: libcurl reads the headers and completes without waiting for a body.
            try easy.set(CURLOPT_NOBODY, true)
            transfer.isHead = true
        case .put:
            // The body as POST fields under a PUT method: libcurl sends Content-Length, hashes exactly these bytes
            // into a SigV4 signature (7.88 does not hash a CURLOPT_UPLOAD read callback's data), and adds
            // `Expect: 100-continue` only above 1 MiB (it would for every CURLOPT_UPLOAD).
            try easy.setUploadBody(job.body ?? [])
            try easy.set(CURLOPT_CUSTOMREQUEST, "PUT")
        case .delete:
            try easy.set(CURLOPT_HTTPGET, true)
            try easy.set(CURLOPT_CUSTOMREQUEST, "DELETE")
        }
        if let signing = job.awsSigV4 {
            // libcurl signs the final request (method, path, query, the headers set here, the body's SHA-256) and
            // adds Authorization and X-Amz-Date. USERNAME and PASSWORD instead of USERPWD: no ':' splitting.
            try easy.set(CURLOPT_AWS_SIGV4, signing.provider)
            try easy.set(CURLOPT_USERNAME, signing.accessKeyID)
            try easy.set(CURLOPT_PASSWORD, signing.secretAccessKey)
        }
        try easy.set(CURLOPT_FOLLOWLOCATION, false)  // HTTPFetcher follows, applying the policy at every hop
        try easy.set(CURLOPT_TIMEOUT_MS, max(1, job.timeout.roundedUpMilliseconds))
        try easy.set(
            CURLOPT_CONNECTTIMEOUT_MS,
            max(1, min(configuration.connectTimeout, job.timeout).roundedUpMilliseconds)
        )
        if configuration.lowSpeedLimit > 0 {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, configuration.lowSpeedLimit)
            try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(configuration.lowSpeedTime.seconds.rounded(.up))))
        }
        if let encoding = configuration.acceptEncoding {
            try easy.set(CURLOPT_ACCEPT_ENCODING, encoding)
        }
        if configuration.prefersHTTP2 {
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            if job.url.utf8.count >= 8, job.url.prefix(8).lowercased() == "https://" {
                // Wait for a connection being set up to say (ALPN) whether it multiplexes, instead of opening
                // another one. Not for cleartext: there HTTP/1.1 is certain, and a second request would wait for
                // the first one's response.
                try easy.set(CURLOPT_PIPEWAIT, true)
            }
        } else {
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        try easy.set(CURLOPT_SSL_VERIFYPEER, true)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caBundlePath = configuration.caBundlePath {
            try easy.set(CURLOPT_CAINFO, caBundlePath)
        }
        try easy.set(CURLOPT_USERAGENT, configuration.userAgent)
        for line in job.headerLines {
            // curl_slist_append copies the line; a NULL result (out of memory) keeps the old list.
            guard let list = curl_slist_append(transfer.headerList, line) else {
                throw HTTPFetchError(code: .other, reason: "curl_slist_append failed (out of memory?)")
            }
            transfer.headerList = list
        }
        if let headerList = transfer.headerList {
            try easy.set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headerList))
        }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        try easy.set(CURLOPT_WRITEFUNCTION, writeCallback: curlWriteCallback)
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try easy.set(CURLOPT_HEADERFUNCTION, writeCallback: curlHeaderCallback)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        if job.restrictsAddresses {
            try easy.set(CURLOPT_OPENSOCKETFUNCTION, openSocketCallback: curlOpenSocketCallback)
            try easy.set(CURLOPT_OPENSOCKETDATA, pointer: context)
            try easy.set(CURLOPT_PREREQFUNCTION, prereqCallback: curlPrereqCallback)
            try easy.set(CURLOPT_PREREQDATA, pointer: context)
        }
    }

    private func completeFinishedTransfers() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(self.multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let raw = message.pointee.easy_handle,
                let transfer = self.transfers.removeValue(forKey: raw)
            else { continue }
            let code = message.pointee.data.result
            // `message` is invalid after the removal.
            curl_multi_remove_handle(self.multi, raw)
            let result = self.result(of: transfer, code: CurlCode(code))
            self.recycle(transfer.easy, after: transfer)
            transfer.continuation.resume(returning: result)
        }
    }

    private func result(of transfer: CurlTransfer, code: CurlCode) -> Result<TransferOutcome, HTTPFetchError> {
        let easy = transfer.easy
        if let refused = transfer.refusedAddress {
            return .failure(
                HTTPFetchError(
                    code: .addressNotAllowed,
                    reason: "image requests may not connect to the non-public address \(refused)",
                    curlCode: code
                )
            )
        }
        if let tooLarge = transfer.tooLargeReason {
            return .failure(HTTPFetchError(code: .tooLarge, reason: tooLarge, curlCode: code))
        }
        guard code == .ok else {
            let text = easy.errorText ?? code.message
            return .failure(HTTPFetchError(code: code.fetchErrorCode, reason: text, curlCode: code))
        }
        let version =
            switch easy.info(long: CURLINFO_HTTP_VERSION) {
            case Int(CURL_HTTP_VERSION_1_0): "1.0"
            case Int(CURL_HTTP_VERSION_2_0): "2"
            case Int(CURL_HTTP_VERSION_3): "3"
            default: "1.1"
            }
        let status = easy.info(long: CURLINFO_RESPONSE_CODE)
        return .success(
            TransferOutcome(
                status: status,
                headers: transfer.headers,
                body: transfer.body,
                redirectURL: (300..<400).contains(status) ? easy.info(string: CURLINFO_REDIRECT_URL) : nil,
                effectiveURL: easy.info(string: CURLINFO_EFFECTIVE_URL) ?? "",
                httpVersion: version,
                totalTime: .microseconds(easy.info(offset: CURLINFO_TOTAL_TIME_T)),
                downloadedBytes: Int(easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T)),
                newConnections: easy.info(long: CURLINFO_NUM_CONNECTS),
                completedAt: .now
            )
        )
    }

    private func cancel(_ ticket: TransferTicket) {
        guard let (raw, transfer) = self.transfers.first(where: { $0.value.ticket === ticket }) else {
            return  // not started yet (the flag fails it then) or already complete
        }
        self.transfers[raw] = nil
        // Removing a transfer in progress closes its connection.
        curl_multi_remove_handle(self.multi, raw)
        self.recycle(transfer.easy, after: transfer)
        transfer.continuation.resume(returning: .failure(.cancelled(url: nil)))
    }

    /// Clears a finished transfer's options and keeps its easy handle for the next one.
    private func recycle(_ easy: CurlEasyHandle, after transfer: CurlTransfer) {
        easy.reset()
        transfer.freeHeaderList()
        if self.idleHandles.count < Self.maxIdleHandles { self.idleHandles.append(easy) }
    }

    private func terminate() {
        self.inbox.withLock { $0.isTerminated = true }
        // A task counted under the lock may still be in its `curl_multi_wakeup`; none can be counted any more.
        while self.wakersInFlight.load(ordering: .acquiring) > 0 { Thread.sleep(forTimeInterval: 0.0001) }
        for (raw, transfer) in self.transfers {
            curl_multi_remove_handle(self.multi, raw)
            transfer.easy.reset()
            transfer.freeHeaderList()
            transfer.continuation.resume(returning: .failure(.shutdown(url: nil)))
        }
        self.transfers = [:]
        self.idleHandles = []  // curl_easy_cleanup in deinit
        curl_multi_cleanup(self.multi)
    }
}
