#pragma once
// Weight buffers written once at load (packed panels, int8 layouts) are fresh anonymous memory:
// their first writes fault one 4 KB page at a time, and for t5-large fp32 (2.8 GB, ~720,000
// pages) those faults were a third of the load. One madvise(MADV_POPULATE_WRITE) per range maps
// the pages in the kernel without a fault each (t5-large fp32 `info`: 1.8 s -> 1.4 s).
//
// Tried and left out: transparent huge pages (MADV_HUGEPAGE). Where the system's THP defrag
// setting is "madvise" (Debian's default), a fault in an advised range compacts memory
// synchronously: the same load took 9.6-13.5 s, mostly in the kernel.
#include <cstddef>

namespace t5s {

// Maps the pages wholly inside [data, data + bytes) writable before they are written. Advice
// only: on kernels without MADV_POPULATE_WRITE (before Linux 5.14) or where it is refused, the
// pages fault in on first write as usual. Contents are unchanged (fresh pages read zero).
void prefault_for_writing(void* data, size_t bytes);

}  // namespace t5s
