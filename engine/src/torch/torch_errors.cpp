#include "torch/torch_errors.h"

#include <c10/util/Exception.h>

#include <new>

namespace t5s {

bool is_out_of_memory(const std::exception& e) {
    return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr || dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
}

Error out_of_memory_error(const std::exception& e, const std::string& during) {
    const bool host = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    if (host && during.empty()) return Error(ErrorCode::OutOfMemory, "out of host memory");
    const std::string where = during.empty() ? "" : " during " + during;
    return Error(ErrorCode::OutOfMemory, "out of memory" + where + ": " + std::string(e.what()).substr(0, 200));
}

}  // namespace t5s
