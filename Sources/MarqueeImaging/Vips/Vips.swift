import CMarqueeVips
import Cvips

/// libvips' process-wide state for MarqueeImaging.
enum Vips {
    /// The outcome of starting libvips, computed once per process (a `static let` is initialised exactly once,
    /// thread-safely): `vips_init`, `vips_concurrency_set(1)`, ORC vector code off, untrusted loaders blocked,
    /// then every loader blocked but the JPEG/PNG/WebP/GIF buffer loaders, the operation cache off, and libvips'
    /// stderr warnings dropped. The upstream emulator draws its pictures through this module too
    /// (``DrawnPicture``), so one process never starts libvips two ways.
    static let initialization: Result<Void, ImagingError> = {
        guard CMarqueeVips_init("marquee", 1) == 0 else {
            return .failure(ImagingError(code: .internal, reason: "vips_init failed: \(Self.lastError())"))
        }
        // CMarqueeVips_init turns libvips' ORC vector code off (ORC 0.4.33 corrupts its code memory when the
        // pool's threads build and free operations at once); refuse to start if it did not.
        guard !(Self.vectorUsesORC && Self.isVectorEnabled) else {
            return .failure(ImagingError(code: .internal, reason: "libvips' vector (ORC) code is still on"))
        }
        guard CMarqueeVips_restrict_loaders() == 0 else {
            return .failure(ImagingError(code: .internal, reason: "restricting loaders failed: \(Self.lastError())"))
        }
        // The operation cache keeps recent operations — their inputs and outputs — alive for reuse. Every image
        // here is new, so it would only hold memory (and pointers to buffers we free), so keep none.
        vips_cache_set_max(0)
        vips_cache_set_max_mem(0)
        // Every failure reaches the caller as an ImagingError with libvips' error text; its warnings on stderr
        // would only repeat them, unstructured, in the worker's logs.
        CMarqueeVips_silence_warnings()
        return .success(())
    }()

    /// Whether libvips runs its vector code paths in this process.
    static var isVectorEnabled: Bool { CMarqueeVips_vector_is_enabled() != 0 }

    /// Whether this libvips' vector code is ORC, compiled at run time (libvips before 8.15).
    static var vectorUsesORC: Bool { CMarqueeVips_vector_uses_orc() != 0 }

    /// libvips' error text, cleared afterwards. libvips keeps one error buffer for the whole process, shared by
    /// every thread (https://www.libvips.org/API/current/libvips-error.html): while other threads run libvips
    /// calls, the text may hold their messages too, or miss this call's if another thread read it first.
    static func lastError() -> String {
        // vips_error_buffer_copy returns a copy we own (g_free) and clears the buffer.
        guard let text = vips_error_buffer_copy() else { return "unknown libvips error" }
        defer { g_free(text) }
        let message = String(cString: text).trimmingTrailingNewlines()
        return message.isEmpty ? "unknown libvips error" : message
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text = text.dropLast() }
        return String(text).replacingNewlines()
    }

    /// libvips joins several messages with newlines; a dead-letter header wants one line.
    private func replacingNewlines() -> String {
        String(self.map { $0.isNewline ? ";" : $0 })
    }
}
