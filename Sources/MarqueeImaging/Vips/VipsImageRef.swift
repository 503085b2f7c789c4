import CMarqueeVips
import Cvips

/// Owns one reference to a `VipsImage` and drops it (`g_object_unref`) when released.
///
/// Not `Sendable`: an image pipeline runs start to finish on one pool thread, and its images never leave it.
final class VipsImageRef {
    /// The image; valid while this owner lives.
    let pointer: UnsafeMutablePointer<VipsImage>

    /// Takes over a reference the caller owns (e.g. the `out` of a libvips operation).
    init(owning pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(self.pointer)
    }

    var width: Int { Int(vips_image_get_width(self.pointer)) }
    var height: Int { Int(vips_image_get_height(self.pointer)) }
    var bands: Int { Int(vips_image_get_bands(self.pointer)) }
    var hasAlpha: Bool { vips_image_hasalpha(self.pointer) != 0 }
    var format: VipsBandFormat { vips_image_get_format(self.pointer) }
    var interpretation: VipsInterpretation { vips_image_guess_interpretation(self.pointer) }

    /// An integer header field, if present.
    func int(_ name: String) -> Int? {
        guard vips_image_get_typeof(self.pointer, name) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(self.pointer, name, &value) == 0 else {
            vips_error_clear()
            return nil
        }
        return Int(value)
    }

    /// A string header field, if present.
    func string(_ name: String) -> String? {
        guard vips_image_get_typeof(self.pointer, name) != 0 else { return nil }
        var value: UnsafePointer<CChar>?
        // The string belongs to the image: copy it before the image goes.
        guard vips_image_get_string(self.pointer, name, &value) == 0, let value else {
            vips_error_clear()
            return nil
        }
        return String(cString: value)
    }

    /// Whether a header field is present (e.g. "exif-data", "icc-profile-data").
    func has(_ name: String) -> Bool { vips_image_get_typeof(self.pointer, name) != 0 }

    /// Removes the metadata fields a saver could write: ICC profile, EXIF (the blob and the parsed `exif-ifd…`
    /// fields, from which savers rebuild an EXIF block), XMP, IPTC, Photoshop resources, orientation. Only on an
    /// image this owner made and no one else shares yet (e.g. a fresh memory copy).
    func removeMetadata() {
        // vips_image_get_fields returns a NULL-terminated array of copies we own (g_strfreev).
        guard let fields = vips_image_get_fields(self.pointer) else { return }
        defer { g_strfreev(fields) }
        var names: [String] = []
        var index = 0
        while let field = fields[index] {
            names.append(String(cString: field))
            index += 1
        }
        let exact: Set = ["icc-profile-data", "xmp-data", "iptc-data", "photoshop-data", "orientation"]
        for name in names where exact.contains(name) || name.hasPrefix("exif-") {
            _ = vips_image_remove(self.pointer, name)
        }
    }

    /// Runs an operation that makes a new image from this one; a failure becomes an ``ImagingError`` with
    /// `code` and libvips' text.
    func apply(
        _ what: String,
        code: ImagingError.Code = .internal,
        _ operation: (UnsafeMutablePointer<VipsImage>, inout UnsafeMutablePointer<VipsImage>?) -> Int32
    ) throws(ImagingError) -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>?
        let result = operation(self.pointer, &out)
        guard result == 0, let out else {
            if let out { g_object_unref(out) }
            throw ImagingError(code: code, reason: "\(what) failed: \(Vips.lastError())")
        }
        return VipsImageRef(owning: out)
    }

    /// The pixels rendered into memory: this is where a lazy pipeline (and its decode) actually runs.
    func copiedToMemory(code: ImagingError.Code, what: String) throws(ImagingError) -> VipsImageRef {
        guard let memory = vips_image_copy_memory(self.pointer) else {
            throw ImagingError(code: code, reason: "\(what): \(Vips.lastError())")
        }
        return VipsImageRef(owning: memory)
    }

    /// Encodes with a saver that returns a buffer we own (`g_free`), and copies it out.
    ///
    /// The return value is checked: truncated or broken input often surfaces only here, when the pixels are
    /// finally read.
    func encoded(
        _ what: String,
        code: ImagingError.Code = .internal,
        _ save: (UnsafeMutablePointer<VipsImage>, inout UnsafeMutableRawPointer?, inout Int) -> Int32
    ) throws(ImagingError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let result = save(self.pointer, &buffer, &length)
        defer { if let buffer { g_free(buffer) } }
        guard result == 0, let buffer, length > 0 else {
            throw ImagingError(code: code, reason: "\(what) failed: \(Vips.lastError())")
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// The pixels as bytes (band-interleaved, row by row); the image should be 8-bit.
    func pixelBytes() throws(ImagingError) -> [UInt8] {
        var size = 0
        guard let memory = vips_image_write_to_memory(self.pointer, &size) else {
            throw ImagingError(code: .internal, reason: "vips_image_write_to_memory failed: \(Vips.lastError())")
        }
        defer { g_free(memory) }
        return Array(UnsafeRawBufferPointer(start: memory, count: size))
    }
}

extension VipsImageRef {
    /// Up to this shrink factor, ``resized(toWidth:)`` reduces with Lanczos 3 alone (`vips_reduce`); beyond it,
    /// `vips_resize` box-shrinks by an integer factor first so the kernel stays short.
    ///
    /// Below 4 the two are the same operation (`vips_resize` box-shrinks by ⌊factor ÷ 2⌋, which is 1), pixel for
    /// pixel. From 4 to 8 (500 → 92 is 5.4) `vips_reduce` skips the 2×2 box average, which is both cheaper (no
    /// line cache for the box shrink) and closer to a true Lanczos 3; the kernel is then at most 49 taps.
    static let maximumReduceFactor = 8.0

    /// Resized to exactly `width` pixels wide (height in proportion), with Lanczos 3; alpha is premultiplied
    /// around the resize so transparent pixels do not bleed their colour into the edges.
    func resized(toWidth width: Int) throws(ImagingError) -> VipsImageRef {
        let height = max(1, Int((Double(self.height) * Double(width) / Double(self.width)).rounded()))
        let hscale = Double(width) / Double(self.width)
        let vscale = Double(height) / Double(self.height)
        let kernel = Int32(VIPS_KERNEL_LANCZOS3.rawValue)
        let hshrink = Double(self.width) / Double(width)
        let vshrink = Double(self.height) / Double(height)
        let reduces = hshrink >= 1 && vshrink >= 1 && max(hshrink, vshrink) <= Self.maximumReduceFactor
        let scale = { (image: VipsImageRef) throws(ImagingError) -> VipsImageRef in
            if reduces {
                try image.apply("vips_reduce") { CMarqueeVips_reduce($0, &$1, hshrink, vshrink, kernel) }
            } else {
                try image.apply("vips_resize") { CMarqueeVips_resize($0, &$1, hscale, vscale, kernel) }
            }
        }
        var result: VipsImageRef
        if self.hasAlpha {
            let premultiplied = try self.apply("vips_premultiply") { CMarqueeVips_premultiply($0, &$1) }
            let scaled = try scale(premultiplied)
            let straight = try scaled.apply("vips_unpremultiply") { CMarqueeVips_unpremultiply($0, &$1) }
            result = try straight.apply("vips_cast") { CMarqueeVips_cast($0, &$1, Int32(VIPS_FORMAT_UCHAR.rawValue)) }
        } else {
            result = try scale(self)
        }
        if result.width != width || result.height != height {
            // Rounding in vips_resize can leave a pixel more; never less, as scale × size rounds to the target.
            guard result.width >= width, result.height >= height else {
                throw ImagingError(
                    code: .internal,
                    reason:
                        "\(reduces ? "vips_reduce" : "vips_resize") made \(result.width)×\(result.height), wanted \(width)×\(height)"
                )
            }
            result = try result.apply("vips_extract_area") {
                CMarqueeVips_extract_area($0, &$1, 0, 0, Int32(width), Int32(height))
            }
        }
        return result
    }

    /// Alpha flattened onto white (unchanged without alpha).
    func flattenedOntoWhite() throws(ImagingError) -> VipsImageRef {
        guard self.hasAlpha else { return self }
        let flat = try self.apply("vips_flatten") { CMarqueeVips_flatten($0, &$1, 255, 255, 255) }
        guard flat.format != VIPS_FORMAT_UCHAR else { return flat }
        return try flat.apply("vips_cast") { CMarqueeVips_cast($0, &$1, Int32(VIPS_FORMAT_UCHAR.rawValue)) }
    }
}
