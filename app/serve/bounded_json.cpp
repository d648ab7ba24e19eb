#include "serve/bounded_json.h"

#include <string>

#include "t5s/error.h"

namespace t5s::serve {

int json_nesting_depth(std::string_view text, int stop_at) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest >= stop_at) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

nlohmann::json parse_bounded_json(std::string_view body, std::string_view what) {
    const std::string name(what);
    if (body.size() > kMaxJsonBytes)
        throw Error(ErrorCode::InvalidArgument, name + ": JSON larger than " + std::to_string(kMaxJsonBytes) + " bytes");
    if (json_nesting_depth(body, kMaxJsonDepth + 1) > kMaxJsonDepth)
        throw Error(ErrorCode::InvalidArgument, name + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    nlohmann::json j = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Error(ErrorCode::InvalidArgument, name + ": malformed JSON");
    return j;
}

}  // namespace t5s::serve
