// CMarqueeVips: fixed-arity wrappers around libvips' variadic calls.
//
// Why this shim exists: libvips passes optional arguments as a NULL-terminated list of name/value pairs
// (`vips_jpegsave_buffer(in, &buf, &len, "Q", 85, "strip", TRUE, NULL)`), and Swift cannot call variadic C
// functions. Each wrapper here takes the optional arguments Marquee uses as ordinary parameters and forwards
// them, so Swift calls a plain C function (the same approach as swift-corelibs-foundation's
// CFURLSession_easy_setopt_*). Non-variadic libvips calls (vips_image_new_from_memory_copy, vips_image_get_width,
// vips_image_set_int, g_object_unref, g_free …) are called from Swift directly through the Cvips module.
//
// Conventions:
// - Functions returning `int` return 0 on success and -1 on failure (libvips' convention); the error text is
//   in libvips' error buffer (vips_error_buffer_copy()), which is global to the process and shared by every
//   thread: a failure's text may be mixed with, or taken by, another thread's failure at the same time.
// - An output `VipsImage **` receives a new reference the caller owns and must g_object_unref.
// - An output `void **buf` receives memory the caller owns and must g_free.
// - Every call here is CPU-bound and may block for a long time: never call them on an event loop or on the
//   Swift cooperative pool; use a bounded thread pool of their own.
#ifndef C_MARQUEE_VIPS_H
#define C_MARQUEE_VIPS_H

#include <stddef.h>
#include <vips/vips.h>

/// Starts libvips once per process (`vips_init`), keeps its own thread pool to one thread per operation
/// (`vips_concurrency_set(1)`: parallelism comes from the caller's pool), turns its vector code off where that
/// is ORC (`vips_vector_set_enabled(FALSE)` before libvips 8.15: ORC 0.4.33's code allocator is not safe when
/// several threads build and free libvips operations at once), and optionally blocks untrusted loaders. Returns 0
/// on success.
int CMarqueeVips_init(const char *_Nonnull program_name, int block_untrusted);

/// Whether libvips runs its vector code paths: non-zero when on.
int CMarqueeVips_vector_is_enabled(void);

/// Whether this libvips' vector code is ORC, compiled at run time (before 8.15; 8.15 replaced it with Highway):
/// non-zero when it is.
int CMarqueeVips_vector_uses_orc(void);

// MARK: - Loading

/// Loads an image from memory. `sequential` non-zero asks for sequential access (reads the header only until
/// pixels are needed: use it to check dimensions before decoding). `option_string` may be NULL (e.g.
/// "fail_on=error"). Returns NULL on failure.
VipsImage *_Nullable CMarqueeVips_image_new_from_buffer(
    const void *_Nonnull buf, size_t len, const char *_Nullable option_string, int sequential);

/// Thumbnails an encoded image straight from memory with shrink-on-load. `height` 0 means "constrain the width
/// only" (VIPS_MAX_COORD). `no_rotate` non-zero disables EXIF auto-rotation. `option_string` is passed to the
/// loader (e.g. "fail_on=error"; may be NULL).
int CMarqueeVips_thumbnail_buffer(
    const void *_Nonnull buf, size_t len, VipsImage *_Nullable *_Nonnull out, int width, int height,
    int no_rotate, const char *_Nullable option_string);

// MARK: - Creating and drawing

/// A black image of `width` × `height` with `bands` bands (uchar after a cast is up to the caller).
int CMarqueeVips_black(VipsImage *_Nullable *_Nonnull out, int width, int height, int bands);

/// Resizes by `hscale` horizontally and `vscale` vertically with `kernel` (VipsKernel, e.g. VIPS_KERNEL_LINEAR).
int CMarqueeVips_resize(
    VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, double hscale, double vscale, int kernel);

/// Shrinks by `hshrink` horizontally and `vshrink` vertically (both ≥ 1) with `kernel` alone (VipsKernel, e.g.
/// VIPS_KERNEL_LANCZOS3): vips_reducev, then vips_reduceh, no block shrink first (unlike vips_resize, which box-shrinks
/// by the integer part of half the factor before reducing).
int CMarqueeVips_reduce(
    VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, double hshrink, double vshrink, int kernel);

/// Rotates by a multiple of 90 degrees (VipsAngle: VIPS_ANGLE_D90 is clockwise).
int CMarqueeVips_rot(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, int angle);

/// Rotates upright according to the image's EXIF orientation and clears the orientation tag.
int CMarqueeVips_autorot(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out);

/// Draws a rectangle in place (the image must be in memory, e.g. from vips_image_copy_memory).
int CMarqueeVips_draw_rect(
    VipsImage *_Nonnull image, const double *_Nonnull ink, int bands, int left, int top, int width, int height,
    int fill);

/// Draws a circle in place (the image must be in memory).
int CMarqueeVips_draw_circle(
    VipsImage *_Nonnull image, const double *_Nonnull ink, int bands, int cx, int cy, int radius, int fill);

/// Cuts out the area `width` × `height` at (`left`, `top`).
int CMarqueeVips_extract_area(
    VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, int left, int top, int width, int height);

/// Casts to another band format (VipsBandFormat, e.g. VIPS_FORMAT_UCHAR), clamping.
int CMarqueeVips_cast(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, int format);

// MARK: - Saving

/// Encodes in the format the `suffix` names (".jpg", ".png", ".webp[Q=80]" …).
int CMarqueeVips_image_write_to_buffer(
    VipsImage *_Nonnull image, const char *_Nonnull suffix, void *_Nullable *_Nonnull buf, size_t *_Nonnull len);

/// JPEG with quality `quality` (1…100); `strip` non-zero drops all metadata (EXIF orientation included).
/// Without `strip`, the image's "orientation" field (vips_image_set_int(image, "orientation", n)) is written
/// as the EXIF Orientation tag.
int CMarqueeVips_jpegsave_buffer(
    VipsImage *_Nonnull image, void *_Nullable *_Nonnull buf, size_t *_Nonnull len, int quality, int strip);

/// PNG with zlib `compression` (0…9).
int CMarqueeVips_pngsave_buffer(
    VipsImage *_Nonnull image, void *_Nullable *_Nonnull buf, size_t *_Nonnull len, int compression, int strip);

/// WebP with quality `quality` (1…100).
int CMarqueeVips_webpsave_buffer(
    VipsImage *_Nonnull image, void *_Nullable *_Nonnull buf, size_t *_Nonnull len, int quality, int strip);

// MARK: - MarqueeImaging (the image worker's pipeline)

/// Shrinks the loader attack surface: blocks every loader (`VipsForeignLoad` and below), then re-enables only the
/// in-memory JPEG, PNG, WebP and GIF loaders (VipsForeignLoad{Jpeg,Png,Webp,Nsgif}Buffer, i.e. jpegload_buffer,
/// pngload_buffer, webpload_buffer, gifload_buffer). Process-wide; call after CMarqueeVips_init. Returns 0 on
/// success, -1 (nothing blocked) if one of those loaders is missing.
int CMarqueeVips_restrict_loaders(void);

/// Drops libvips' warnings (g_log domain "VIPS", level warning) instead of printing them on stderr: the
/// failures they describe ("error in tile …", "Premature end of JPEG file") reach the caller as errors anyway.
void CMarqueeVips_silence_warnings(void);

/// Converts to another colour space (VipsInterpretation, e.g. VIPS_INTERPRETATION_sRGB); alpha is kept.
int CMarqueeVips_colourspace(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, int space);

/// Flattens the alpha band onto the background colour (`red`, `green`, `blue`, 0…255).
int CMarqueeVips_flatten(
    VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, double red, double green, double blue);

/// Premultiplies the colour bands by the alpha band (output is float).
int CMarqueeVips_premultiply(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out);

/// Undoes CMarqueeVips_premultiply (output is float; cast back to the original format).
int CMarqueeVips_unpremultiply(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out);

/// A copy (sharing the pixels) whose interpretation is `interpretation` (VipsInterpretation), e.g. to mark a
/// 4-band image as CMYK.
int CMarqueeVips_copy_interpretation(VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, int interpretation);

/// Transforms to `output_profile` (a file or a built-in name: "srgb", "cmyk", "p3"), importing untagged images
/// with `input_profile` (may be NULL); the output carries the output profile as "icc-profile-data".
int CMarqueeVips_icc_transform(
    VipsImage *_Nonnull in, VipsImage *_Nullable *_Nonnull out, const char *_Nonnull output_profile,
    const char *_Nullable input_profile);

/// One band of Gaussian noise (float) of `width` × `height`, with `mean` and `sigma`, from a fixed `seed`.
int CMarqueeVips_gaussnoise(VipsImage *_Nullable *_Nonnull out, int width, int height, double mean, double sigma,
    int seed);

/// `left` + `right`, pixel by pixel (a one-band operand is added to every band of the other).
int CMarqueeVips_add(VipsImage *_Nonnull left, VipsImage *_Nonnull right, VipsImage *_Nullable *_Nonnull out);

#endif
