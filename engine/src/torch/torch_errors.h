#pragma once
// The one place that recognises running out of memory: by exception type (LibTorch's
// c10::OutOfMemoryError for devices, std::bad_alloc for the host; LibTorch's CPU allocator, which
// throws a plain c10::Error, by its "DefaultCPUAllocator:" prefix), and turns
// it into t5s::Error(OutOfMemory) so front ends can offer a smaller batch (CLI exit code 4).
#include <exception>
#include <string>

#include "t5s/error.h"

namespace t5s {

bool is_out_of_memory(const std::exception& e);

// "out of memory[ during <during>]: <what>" (host allocation failures without context: "out of
// host memory"), code OutOfMemory.
Error out_of_memory_error(const std::exception& e, const std::string& during = "");

// Runs f; an out-of-memory exception leaves it as out_of_memory_error, anything else unchanged.
template <class F>
auto with_out_of_memory_as_error(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        if (is_out_of_memory(e)) throw out_of_memory_error(e);
        throw;
    }
}

}  // namespace t5s
