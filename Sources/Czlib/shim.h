#ifndef MARQUEE_CZLIB_SHIM_H
#define MARQUEE_CZLIB_SHIM_H

#include <zlib.h>

#endif
