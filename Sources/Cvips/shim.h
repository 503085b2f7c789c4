// libvips 8.14 (Debian's libvips-dev). Everything variadic in it goes through CMarqueeVips.
#ifndef MARQUEE_CVIPS_SHIM_H
#define MARQUEE_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
