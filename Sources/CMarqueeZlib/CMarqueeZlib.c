#include "CMarqueeZlib.h"

int CMarqueeZlib_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

int CMarqueeZlib_deflateInit2(z_stream *stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}
