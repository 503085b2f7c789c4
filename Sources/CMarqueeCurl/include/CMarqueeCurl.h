// Why this shim exists: Swift cannot call variadic C functions, and libcurl's option and info entry points
// (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt) are variadic. Each argument kind therefore gets a
// fixed-arity wrapper here (the approach of swift-corelibs-foundation's CFURLSession_easy_setopt_*). The
// wrappers add no behaviour: they forward the argument unchanged and return libcurl's code.
//
// Callback setters take the callback's exact C function-pointer type, so a Swift `@convention(c)` closure of the
// wrong shape does not compile.

#ifndef CMARQUEECURL_H
#define CMARQUEECURL_H

#include <curl/curl.h>

// MARK: - curl_easy_setopt

/// curl_easy_setopt for options taking a `long` (CURLOPTTYPE_LONG, CURLOPTTYPE_VALUES).
CURLcode CMarqueeCurl_easy_setopt_long(CURL * _Nonnull handle, CURLoption option, long value);

/// curl_easy_setopt for options taking a pointer: strings (copied by libcurl), `struct curl_slist *` (NOT copied:
/// it must outlive the transfer), buffers and callback user data.
CURLcode CMarqueeCurl_easy_setopt_ptr(CURL * _Nonnull handle, CURLoption option, void * _Nullable value);

/// curl_easy_setopt for options taking a `curl_off_t` (CURLOPTTYPE_OFF_T, e.g. CURLOPT_MAXFILESIZE_LARGE).
CURLcode CMarqueeCurl_easy_setopt_off_t(CURL * _Nonnull handle, CURLoption option, curl_off_t value);

/// curl_easy_setopt for CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
CURLcode CMarqueeCurl_easy_setopt_write_callback(
    CURL * _Nonnull handle, CURLoption option, curl_write_callback _Nullable callback);

/// curl_easy_setopt for CURLOPT_OPENSOCKETFUNCTION.
CURLcode CMarqueeCurl_easy_setopt_opensocket_callback(
    CURL * _Nonnull handle, CURLoption option, curl_opensocket_callback _Nullable callback);

/// curl_easy_setopt for CURLOPT_XFERINFOFUNCTION.
CURLcode CMarqueeCurl_easy_setopt_xferinfo_callback(
    CURL * _Nonnull handle, CURLoption option, curl_xferinfo_callback _Nullable callback);

/// curl_easy_setopt for CURLOPT_PREREQFUNCTION (called once a connection is made or reused, before the request).
CURLcode CMarqueeCurl_easy_setopt_prereq_callback(
    CURL * _Nonnull handle, CURLoption option, curl_prereq_callback _Nullable callback);

// MARK: - curl_easy_getinfo

/// curl_easy_getinfo for CURLINFO_LONG values.
CURLcode CMarqueeCurl_easy_getinfo_long(CURL * _Nonnull handle, CURLINFO info, long * _Nonnull out);

/// curl_easy_getinfo for CURLINFO_OFF_T values (sizes, and times in microseconds).
CURLcode CMarqueeCurl_easy_getinfo_off_t(CURL * _Nonnull handle, CURLINFO info, curl_off_t * _Nonnull out);

/// curl_easy_getinfo for CURLINFO_STRING values; the string belongs to the handle (valid until its next use).
CURLcode CMarqueeCurl_easy_getinfo_string(
    CURL * _Nonnull handle, CURLINFO info, const char * _Nullable * _Nonnull out);

/// curl_easy_getinfo for CURLINFO_PRIVATE (the pointer given with CURLOPT_PRIVATE).
CURLcode CMarqueeCurl_easy_getinfo_ptr(CURL * _Nonnull handle, CURLINFO info, void * _Nullable * _Nonnull out);

// MARK: - curl_multi_setopt

/// curl_multi_setopt for options taking a `long`.
CURLMcode CMarqueeCurl_multi_setopt_long(CURLM * _Nonnull handle, CURLMoption option, long value);

#endif
