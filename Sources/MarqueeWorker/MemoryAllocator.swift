#if canImport(Glibc)
import Glibc
#endif

/// Which `malloc` the process runs on, for the worker's start-up line (`marquee.allocator`).
///
/// marquee-fetch and marquee-index link jemalloc (docs/fetch.md, "Memory allocator"); the image worker uses glibc's.
/// Found at run time rather than assumed, so a build or an `LD_PRELOAD` that changes it is reported as it is.
public enum MemoryAllocator {
    /// `jemalloc <version>` when jemalloc's `mallctl` is in the process, else `glibc`.
    public static var current: String {
        #if canImport(Glibc)
        typealias MallCtl =
            @convention(c) (
                UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?,
                Int
            ) -> Int32
        // RTLD_DEFAULT is the null handle on glibc.
        guard let symbol = dlsym(nil, "mallctl") else { return "glibc" }
        let mallctl = unsafeBitCast(symbol, to: MallCtl.self)
        var version: UnsafePointer<CChar>?
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &version, &size, nil, 0) == 0, let version else { return "jemalloc" }
        return "jemalloc \(String(cString: version))"
        #else
        return "system"
        #endif
    }
}
