#pragma once
// Tensors that are read-only views of a safetensors file's mapping, not copies of it: an inference
// load then holds each weight once, in the form it multiplies with, and a table read a row at a
// time (the embedding) stays in the file, resident only where it is read.
#include <ATen/ATen.h>

#include <memory>

#include "t5s/safetensors.h"

namespace t5s {

// A CPU tensor over `view`'s bytes, keeping `file` mapped while any tensor over it lives. When the
// tensor's storage dies (converted, packed, quantised or unused) the pages wholly inside its range
// leave this process's memory at once, without waiting for the file to be unmapped. Undefined when
// the bytes are not aligned to the element size (the caller copies then). The mapping is
// read-only: a write through the tensor faults, so only code that never writes weights in place
// (inference) may hold one.
at::Tensor map_tensor_view(const std::shared_ptr<SafetensorsFile>& file, const TensorView& view, at::ScalarType type);

// madvise(MADV_DONTNEED) on the pages of a read-only file mapping wholly inside [data, data + n):
// they leave this process's memory; a later read faults them back in from the file.
void drop_file_pages(const void* data, size_t n);

// True when `t` is such a view.
bool is_mapped_view(const at::Tensor& t);

}  // namespace t5s
