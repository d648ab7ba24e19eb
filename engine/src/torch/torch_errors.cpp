#include "torch/torch_errors.h"

#include <c10/util/Exception.h>

#include <new>

namespace t5s {

namespace {

// LibTorch's CPU allocator fails with a plain c10::Error (not c10::OutOfMemoryError) whose message
// starts with "DefaultCPUAllocator:"; that prefix is the only thing that tells it apart.
bool is_cpu_allocator_failure(const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    return c10_error && std::string(c10_error->what_without_backtrace()).rfind("DefaultCPUAllocator:", 0) == 0;
}

// The first line of an exception's message (c10 errors append a C++ stack trace), at most 200 bytes.
std::string first_line(const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    std::string what = c10_error ? c10_error->what_without_backtrace() : e.what();
    what = what.substr(0, what.find('\n'));
    return what.substr(0, 200);
}

}  // namespace

bool is_out_of_memory(const std::exception& e) {
    return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr || dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
           is_cpu_allocator_failure(e);
}

Error out_of_memory_error(const std::exception& e, const std::string& during) {
    const bool host = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    if (host && during.empty()) return Error(ErrorCode::OutOfMemory, "out of host memory");
    const std::string where = during.empty() ? "" : " during " + during;
    return Error(ErrorCode::OutOfMemory, "out of memory" + where + ": " + first_line(e));
}

}  // namespace t5s
