#pragma once
// This process's and this machine's host memory, from /proc (Linux). 0 when unreadable.
#include <cstdint>

namespace t5s {

int64_t process_rss_bytes();       // resident set now (VmRSS)
int64_t process_peak_rss_bytes();  // peak resident set (VmHWM)
int64_t host_available_bytes();    // MemAvailable

// Drops from this process's resident set the pages of private, read-only file mappings that hold
// nothing but file contents (no copy-on-write page): shared libraries' code and constants and
// read-only weight files. Such pages are the kernel's to reclaim at any time and fault back in
// from the file when touched again; LibTorch's start-up alone leaves ~50 MB of them that an
// inference process never reads again. Returns the bytes that were resident in them.
int64_t release_clean_file_pages();

}  // namespace t5s
