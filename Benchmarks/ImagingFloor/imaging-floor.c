// The CPU floor of making the four default WebP variants of a JPEG poster, whatever the tool: libjpeg-turbo's
// decode at 1/2, 1/4 and 1/8 scale, and libwebp's four encodes (500, 342, 185 and 92 wide; quality 80, libwebp's
// default method 4, as both `make bench-images` tools use). Process CPU time per poster, averaged over the files.
// See BENCHMARKS.md ("Imaging"). Build and run:
//   cc -O2 Benchmarks/ImagingFloor/imaging-floor.c -o /tmp/imaging-floor -ljpeg -lwebp
//   /tmp/imaging-floor var/bench-images/input-30/*.jpg
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <jpeglib.h>  // after stdio.h and stddef.h, which it needs
#include <webp/encode.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// Decodes `bytes` at 1/`denominator` scale into RGB; returns the pixels (caller frees) and their size.
static unsigned char *decode(const unsigned char *bytes, long size, int denominator, int *width, int *height) {
    struct jpeg_decompress_struct decoder;
    struct jpeg_error_mgr errors;
    decoder.err = jpeg_std_error(&errors);
    jpeg_create_decompress(&decoder);
    jpeg_mem_src(&decoder, bytes, (unsigned long)size);
    jpeg_read_header(&decoder, TRUE);
    decoder.scale_num = 1;
    decoder.scale_denom = (unsigned)denominator;
    decoder.out_color_space = JCS_RGB;
    jpeg_start_decompress(&decoder);
    *width = (int)decoder.output_width;
    *height = (int)decoder.output_height;
    size_t stride = (size_t)*width * 3;
    unsigned char *pixels = malloc(stride * (size_t)*height);
    while (decoder.output_scanline < decoder.output_height) {
        JSAMPROW row = pixels + decoder.output_scanline * stride;
        jpeg_read_scanlines(&decoder, &row, 1);
    }
    jpeg_finish_decompress(&decoder);
    jpeg_destroy_decompress(&decoder);
    return pixels;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s poster.jpg…\n", argv[0]);
        return 2;
    }
    const int denominators[3] = {2, 4, 8};
    const int widths[4] = {500, 342, 185, 92};
    double decoding[3] = {0, 0, 0}, encoding = 0;
    int files = 0;
    for (int index = 1; index < argc; index++) {
        FILE *file = fopen(argv[index], "rb");
        if (!file) {
            perror(argv[index]);
            return 1;
        }
        fseek(file, 0, SEEK_END);
        long size = ftell(file);
        fseek(file, 0, SEEK_SET);
        unsigned char *bytes = malloc((size_t)size);
        if (fread(bytes, 1, (size_t)size, file) != (size_t)size) {
            fprintf(stderr, "%s: short read\n", argv[index]);
            return 1;
        }
        fclose(file);
        int width = 0, height = 0;
        for (int scale = 0; scale < 3; scale++) {
            double start = cpu_seconds();
            free(decode(bytes, size, denominators[scale], &width, &height));
            decoding[scale] += cpu_seconds() - start;
        }
        // The encodes read the 1/4-scale image (500 wide for a 2000-wide poster): the smaller variants encode a
        // top-left crop of their size, which costs what their resized image would (the encoder's cost follows the
        // pixel count and the content's detail).
        unsigned char *pixels = decode(bytes, size, 4, &width, &height);
        double start = cpu_seconds();
        for (int variant = 0; variant < 4; variant++) {
            int w = widths[variant] < width ? widths[variant] : width;
            int h = w * 3 / 2 < height ? w * 3 / 2 : height;
            uint8_t *webp = NULL;
            if (WebPEncodeRGB(pixels, w, h, width * 3, 80, &webp) == 0) {
                fprintf(stderr, "%s: WebP encoding failed\n", argv[index]);
                return 1;
            }
            WebPFree(webp);
        }
        encoding += cpu_seconds() - start;
        free(pixels);
        free(bytes);
        files++;
    }
    printf("decode 1/2: %.1f ms  1/4: %.1f ms  1/8: %.1f ms  four WebP encodes: %.1f ms  (CPU per poster, %d files)\n",
           decoding[0] / files * 1000, decoding[1] / files * 1000, decoding[2] / files * 1000, encoding / files * 1000, files);
    return 0;
}
