#ifndef MARQUEE_CJEMALLOC_SHIM_H
#define MARQUEE_CJEMALLOC_SHIM_H

// Linking this module makes jemalloc the process's malloc: Debian builds it without a symbol prefix, so its
// malloc and free interpose glibc's for every library in the process. Importing the module is what links it;
// only `mallctl` is declared (the workers read jemalloc's version through dlsym, MemoryAllocator.swift).
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

#endif
