#include "t5s/error.h"

#include <new>

namespace t5s {

const char* to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::InvalidArgument: return "invalid_argument";
        case ErrorCode::FileNotFound: return "file_not_found";
        case ErrorCode::CorruptFile: return "corrupt_file";
        case ErrorCode::Unsupported: return "unsupported";
        case ErrorCode::OutOfMemory: return "out_of_memory";
        case ErrorCode::Cancelled: return "cancelled";
        case ErrorCode::Internal: return "internal";
    }
    return "internal";
}

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
