#include "CMarqueeCurl.h"

CURLcode CMarqueeCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CMarqueeCurl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CMarqueeCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CMarqueeCurl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CMarqueeCurl_easy_setopt_opensocket_callback(
    CURL *handle, CURLoption option, curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CMarqueeCurl_easy_setopt_xferinfo_callback(CURL *handle, CURLoption option, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CMarqueeCurl_easy_setopt_prereq_callback(CURL *handle, CURLoption option, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CMarqueeCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CMarqueeCurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CMarqueeCurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CMarqueeCurl_easy_getinfo_ptr(CURL *handle, CURLINFO info, void **out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLMcode CMarqueeCurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}
