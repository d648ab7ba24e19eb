#include "torch/page_prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace t5s {

void prefault_for_writing(void* data, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);  // failure: plain faults
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace t5s
