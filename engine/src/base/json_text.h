#pragma once
// One way to read a JSON file the user gave us: nlohmann::json::parse, but every failure is one
// t5s::Error(CorruptFile) line naming the source and, for a number beyond double's range (a
// 400-digit number, which nlohmann reports as out_of_range without a position), the key it
// belongs to. Never a json.exception escaping as "internal error".
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace t5s {

nlohmann::json parse_json_text(std::string_view text, const std::string& source);

}  // namespace t5s
