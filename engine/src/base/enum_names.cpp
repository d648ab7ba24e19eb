// The message of t5s/enum_names.h: one wording for every enum a user can name.
#include "t5s/enum_names.h"

#include "t5s/error.h"

namespace t5s::detail {

std::string list_names(const std::vector<std::string>& names, const char* last_separator) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? last_separator : ", ";
        out += names[i];
    }
    return out;
}

void throw_unknown_name(const char* what, std::string_view text, const std::vector<std::string>& accepted) {
    throw Error(ErrorCode::InvalidArgument,
                std::string("unknown ") + what + " '" + std::string(text) + "' (expected " + list_names(accepted) + ")");
}

}  // namespace t5s::detail
