#include "t5s/error.h"

#include <new>

namespace t5s {

CaughtError describe_exception(std::exception_ptr caught) {
    try {
        std::rethrow_exception(caught);
    } catch (const Error& e) {
        return {e.code(), e.what()};
    } catch (const std::bad_alloc&) {
        return {ErrorCode::OutOfMemory, "out of memory (host allocation failed); try a smaller batch"};
    } catch (const std::exception& e) {
        return {ErrorCode::Internal, e.what()};
    } catch (...) {
        return {ErrorCode::Internal, "unknown exception"};
    }
}

}  // namespace t5s
