// Why this shim exists: zlib's stream set-up calls (inflateInit2, deflateInit2) are function-like macros that pass
// the library's version and the size of z_stream to the real entry points, and Swift imports no function-like
// macro. Each wrapper here is that macro as a function; it adds no behaviour and returns zlib's code.

#ifndef CMARQUEEZLIB_H
#define CMARQUEEZLIB_H

#include <zlib.h>

/// inflateInit2(stream, windowBits): windowBits 15 + 32 reads gzip or zlib headers, 15 + 16 gzip only.
int CMarqueeZlib_inflateInit2(z_stream * _Nonnull stream, int windowBits);

/// deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY): windowBits 15 + 16 writes
/// a gzip header and trailer.
int CMarqueeZlib_deflateInit2(z_stream * _Nonnull stream, int level, int windowBits, int memLevel);

#endif
