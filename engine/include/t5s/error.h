#pragma once
// One exception type for everything the engine reports to its callers. The message is a single
// line that names the file (or setting) and the problem; the code lets front ends react (e.g. offer
// a smaller batch on OutOfMemory).
#include <exception>
#include <stdexcept>
#include <string>

#include "t5s/enum_names.h"

namespace t5s {

enum class ErrorCode {
    InvalidArgument,  // a setting, flag or input text is not acceptable
    FileNotFound,     // a directory or file is missing
    CorruptFile,      // a file exists but its content is malformed
    Unsupported,      // well-formed, but a model or feature we do not implement (never wrong numbers)
    OutOfMemory,      // host or device allocation failed
    Cancelled,        // the caller asked to stop
    Internal,         // anything else (a bug, or a library error we did not classify)
};

template <>
struct EnumNames<ErrorCode> {
    static constexpr const char* kWhat = "error code";
    static constexpr EnumName<ErrorCode> kNames[] = {{ErrorCode::InvalidArgument, "invalid_argument"},
                                                     {ErrorCode::FileNotFound, "file_not_found"},
                                                     {ErrorCode::CorruptFile, "corrupt_file"},
                                                     {ErrorCode::Unsupported, "unsupported"},
                                                     {ErrorCode::OutOfMemory, "out_of_memory"},
                                                     {ErrorCode::Cancelled, "cancelled"},
                                                     {ErrorCode::Internal, "internal"}};
};

class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
    ErrorCode code() const { return code_; }

private:
    ErrorCode code_;
};

// What a thread or job boundary reports for a caught exception, so that none escapes: t5s::Error
// keeps its code, std::bad_alloc is OutOfMemory, any other exception is Internal with its text.
struct CaughtError {
    ErrorCode code = ErrorCode::Internal;
    std::string message;
};
CaughtError describe_exception(std::exception_ptr caught);

}  // namespace t5s
