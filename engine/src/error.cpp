#include "t5s/error.h"

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

}  // namespace t5s
