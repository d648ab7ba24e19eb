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
// scope ends, the mmap threshold is fixed where glibc's own adjustment ends (32 MB), so decoding's
// per-step buffers come from the heap, and the trim threshold at kKeptFreeHeapBytes (below).
// A no-op without glibc.
class LoadHeapScope {
public:
    LoadHeapScope();
    ~LoadHeapScope();
    LoadHeapScope(const LoadHeapScope&) = delete;
    LoadHeapScope& operator=(const LoadHeapScope&) = delete;
};

// Freed heap that glibc keeps at the heap's top after the loads, instead of glibc's 64 MB. A
// request frees its K/V cache and activations when it ends (t5-base, batch 32: ~180 MB); given
// back, the next request faulted the same pages in again one 4 KB page at a time (~45,000 faults).
// Kept, they are reused: 7-11 % more tokens/s at t5-base int8 batch 32, beams and sampling
// (tests/bench/README.md). The peak resident set does not change, but an idle process would hold
// its last request's buffers: release_free_heap() gives them back, and the long-lived front ends
// call it once they have been idle a while (platform/idle_heap.h).
constexpr int kKeptFreeHeapBytes = 1 << 30;

// Returns the heap's free pages to the system (glibc's malloc_trim). Returns how far the resident
// set dropped, in bytes (0 without glibc).
int64_t release_free_heap();

}  // namespace t5s
