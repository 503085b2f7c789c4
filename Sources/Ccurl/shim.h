#ifndef MARQUEE_CCURL_SHIM_H
#define MARQUEE_CCURL_SHIM_H

#include <curl/curl.h>

#endif
