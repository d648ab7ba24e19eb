#include "torch/mapped_tensor.h"

#include <c10/core/Storage.h>
#include <c10/util/strides.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace t5s {
namespace {

// What a mapped view's storage owns: the file (so the mapping outlives every view) and its range.
struct MappedRange {
    std::shared_ptr<SafetensorsFile> file;
    const void* data = nullptr;
    size_t nbytes = 0;
};

// Pages shared with a neighbouring tensor stay until the file is unmapped.
void delete_mapped_range(void* context) {
    auto* range = static_cast<MappedRange*>(context);
    drop_file_pages(range->data, range->nbytes);
    delete range;
}

}  // namespace

void drop_file_pages(const void* data, size_t n) {
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + n) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

at::Tensor map_tensor_view(const std::shared_ptr<SafetensorsFile>& file, const TensorView& view, at::ScalarType type) {
    const size_t element = c10::elementSize(type);
    if (reinterpret_cast<uintptr_t>(view.data) % element != 0) return {};
    void* data = const_cast<void*>(view.data);  // read-only pages: ATen's DataPtr is not const
    auto* range = new MappedRange{file, view.data, view.nbytes};
    c10::DataPtr pointer(data, range, &delete_mapped_range, c10::Device(c10::kCPU));
    c10::Storage storage(c10::Storage::use_byte_size_t(), view.nbytes, std::move(pointer), nullptr, false);
    return at::empty({0}, at::TensorOptions().dtype(type)).set_(storage, 0, view.shape, c10::contiguous_strides(view.shape));
}

bool is_mapped_view(const at::Tensor& t) {
    return t.defined() && t.has_storage() && t.storage().data_ptr().get_deleter() == &delete_mapped_range;
}

}  // namespace t5s
