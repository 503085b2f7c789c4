#include "CMarqueeVips.h"

// vips_vector_isenabled / vips_vector_set_enabled: installed with libvips but not part of <vips/vips.h>.
#include <vips/vector.h>

int CMarqueeVips_init(const char *program_name, int block_untrusted) {
    if (VIPS_INIT(program_name) != 0) {
        return -1;
    }
    vips_concurrency_set(1);
    // No ORC vector code: libvips before 8.15 compiles ORC programs whenever it builds some operations (a
    // vertical reduce: one program per few kernel taps) and frees them with the operation, and ORC 0.4.33 splits,
    // marks and merges its code-memory chunks outside its lock. Two threads building or freeing such operations at
    // once corrupt the chunk list: SIGSEGV in liborc, SIGABRT from malloc, or a thread looping forever. Every
    // caller runs libvips on several threads, so turn the vector paths off for the whole process; libvips then
    // runs its C loops (docs/imaging.md, "Vector code (ORC) is off", has the cost). Warming up on one thread
    // would not help: the programs are compiled per operation, not once. libvips 8.15 replaced ORC with Highway,
    // compiled ahead of time, so its vector paths stay on.
    if (CMarqueeVips_vector_uses_orc()) {
        vips_vector_set_enabled(FALSE);
    }
    if (block_untrusted) {
        vips_block_untrusted_set(TRUE);
    }
    return 0;
}

int CMarqueeVips_vector_is_enabled(void) {
    return vips_vector_isenabled() ? 1 : 0;
}

int CMarqueeVips_vector_uses_orc(void) {
    return vips_version(0) < 8 || (vips_version(0) == 8 && vips_version(1) < 15);
}

VipsImage *CMarqueeVips_image_new_from_buffer(
    const void *buf, size_t len, const char *option_string, int sequential) {
    if (sequential) {
        return vips_image_new_from_buffer(buf, len, option_string ? option_string : "",
                                          "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    }
    return vips_image_new_from_buffer(buf, len, option_string ? option_string : "", NULL);
}

int CMarqueeVips_thumbnail_buffer(
    const void *buf, size_t len, VipsImage **out, int width, int height, int no_rotate, const char *option_string) {
    return vips_thumbnail_buffer((void *)buf, len, out, width,
                                 "height", height > 0 ? height : VIPS_MAX_COORD,
                                 "no_rotate", no_rotate ? TRUE : FALSE,
                                 "option_string", option_string ? option_string : "",
                                 NULL);
}

int CMarqueeVips_black(VipsImage **out, int width, int height, int bands) {
    return vips_black(out, width, height, "bands", bands, NULL);
}

int CMarqueeVips_resize(VipsImage *in, VipsImage **out, double hscale, double vscale, int kernel) {
    return vips_resize(in, out, hscale, "vscale", vscale, "kernel", (VipsKernel)kernel, NULL);
}

int CMarqueeVips_reduce(VipsImage *in, VipsImage **out, double hshrink, double vshrink, int kernel) {
    return vips_reduce(in, out, hshrink, vshrink, "kernel", (VipsKernel)kernel, NULL);
}

int CMarqueeVips_rot(VipsImage *in, VipsImage **out, int angle) {
    return vips_rot(in, out, (VipsAngle)angle, NULL);
}

int CMarqueeVips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int CMarqueeVips_draw_rect(
    VipsImage *image, const double *ink, int bands, int left, int top, int width, int height, int fill) {
    return vips_draw_rect(image, (double *)ink, bands, left, top, width, height, "fill", fill ? TRUE : FALSE, NULL);
}

int CMarqueeVips_draw_circle(VipsImage *image, const double *ink, int bands, int cx, int cy, int radius, int fill) {
    return vips_draw_circle(image, (double *)ink, bands, cx, cy, radius, "fill", fill ? TRUE : FALSE, NULL);
}

int CMarqueeVips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int CMarqueeVips_cast(VipsImage *in, VipsImage **out, int format) {
    return vips_cast(in, out, (VipsBandFormat)format, NULL);
}

int CMarqueeVips_image_write_to_buffer(VipsImage *image, const char *suffix, void **buf, size_t *len) {
    return vips_image_write_to_buffer(image, suffix, buf, len, NULL);
}

int CMarqueeVips_jpegsave_buffer(VipsImage *image, void **buf, size_t *len, int quality, int strip) {
    return vips_jpegsave_buffer(image, buf, len, "Q", quality, "strip", strip ? TRUE : FALSE, NULL);
}

int CMarqueeVips_pngsave_buffer(VipsImage *image, void **buf, size_t *len, int compression, int strip) {
    return vips_pngsave_buffer(image, buf, len, "compression", compression, "strip", strip ? TRUE : FALSE, NULL);
}

int CMarqueeVips_webpsave_buffer(VipsImage *image, void **buf, size_t *len, int quality, int strip) {
    return vips_webpsave_buffer(image, buf, len, "Q", quality, "strip", strip ? TRUE : FALSE, NULL);
}

// MARK: - MarqueeImaging

int CMarqueeVips_restrict_loaders(void) {
    // vips_operation_block_set sets the state of a class and every subclass. In 8.14 it finds the class by its
    // type name only (a nickname such as "jpegload_buffer" is silently ignored), so name the classes.
    static const char *const allowed[] = {
        "VipsForeignLoadJpegBuffer", "VipsForeignLoadPngBuffer", "VipsForeignLoadWebpBuffer",
        "VipsForeignLoadNsgifBuffer"};
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        if (g_type_from_name(allowed[i]) == 0) {
            vips_error("CMarqueeVips", "loader %s is not built into this libvips", allowed[i]);
            return -1;
        }
    }
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        vips_operation_block_set(allowed[i], FALSE);
    }
    return 0;
}

static void CMarqueeVips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain;
    (void)level;
    (void)message;
    (void)data;
}

void CMarqueeVips_silence_warnings(void) {
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, CMarqueeVips_drop_log, NULL);
}

int CMarqueeVips_colourspace(VipsImage *in, VipsImage **out, int space) {
    return vips_colourspace(in, out, (VipsInterpretation)space, NULL);
}

int CMarqueeVips_flatten(VipsImage *in, VipsImage **out, double red, double green, double blue) {
    double ink[3] = {red, green, blue};
    // The array is copied into the operation's argument; we own (and drop) our reference.
    VipsArrayDouble *background = vips_array_double_new(ink, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int CMarqueeVips_premultiply(VipsImage *in, VipsImage **out) {
    return vips_premultiply(in, out, NULL);
}

int CMarqueeVips_unpremultiply(VipsImage *in, VipsImage **out) {
    return vips_unpremultiply(in, out, NULL);
}

int CMarqueeVips_copy_interpretation(VipsImage *in, VipsImage **out, int interpretation) {
    return vips_copy(in, out, "interpretation", (VipsInterpretation)interpretation, NULL);
}

int CMarqueeVips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile) {
    if (input_profile) {
        return vips_icc_transform(in, out, output_profile, "input_profile", input_profile, "embedded", TRUE, NULL);
    }
    return vips_icc_transform(in, out, output_profile, "embedded", TRUE, NULL);
}

int CMarqueeVips_gaussnoise(VipsImage **out, int width, int height, double mean, double sigma, int seed) {
    return vips_gaussnoise(out, width, height, "mean", mean, "sigma", sigma, "seed", seed, NULL);
}

int CMarqueeVips_add(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_add(left, right, out, NULL);
}
