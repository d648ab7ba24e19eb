#pragma once
// This process's and this machine's host memory, from /proc (Linux). 0 when unreadable.
#include <cstdint>

namespace t5s {

int64_t process_rss_bytes();       // resident set now (VmRSS)
int64_t process_peak_rss_bytes();  // peak resident set (VmHWM)
int64_t host_available_bytes();    // MemAvailable

}  // namespace t5s
