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

// Held while a model loads. glibc raises its heap's mmap threshold each time a block above it is
// freed (up to 32 MB), so a load that frees temporaries (a fused layer's fp32 weight before it is
// quantised) then serves the weights allocated after them from the heap, where the freed space
// stays resident beside them: t5-small int8 peaked at 432 MB instead of 345 MB. While a scope
// lives, every block of 128 KB or more is a mapping of its own, returned on free. When the last
// scope ends the thresholds are fixed where glibc's own adjustment ends (mmap 32 MB, trim 64 MB),
// so decoding's per-step buffers are reused from the heap as before. A no-op without glibc.
class LoadHeapScope {
public:
    LoadHeapScope();
    ~LoadHeapScope();
    LoadHeapScope(const LoadHeapScope&) = delete;
    LoadHeapScope& operator=(const LoadHeapScope&) = delete;
};

}  // namespace t5s
