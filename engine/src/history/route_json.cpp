// The stored form of a recipe candidate's route (t5s/route.h): the history's `route` column and the
// exports read and write it only through these two functions; the text is route_to_json's
// (t5s/route_json.h), the shape live output gives.
#include <nlohmann/json.hpp>

#include "t5s/error.h"
#include "t5s/history_store.h"
#include "t5s/route_json.h"

namespace t5s {

namespace {

constexpr size_t kMaxLegTextBytes = size_t{1} << 20;

[[noreturn]] void refuse(const std::string& where, const std::string& why) {
    throw Error(ErrorCode::CorruptFile, where + ": the route " + why + " (expected [{\"step\": ..., \"text\": ...}, ...])");
}

const std::string& leg_field(const nlohmann::json& leg, const char* key, size_t max_bytes, const std::string& where) {
    const auto it = leg.find(key);
    if (it == leg.end() || !it->is_string()) refuse(where, std::string("has a leg without a text \"") + key + "\"");
    const std::string& value = it->get_ref<const std::string&>();
    if (value.size() > max_bytes)
        refuse(where, std::string("has a \"") + key + "\" over " + std::to_string(max_bytes) + " bytes");
    return value;
}

}  // namespace

std::string route_json_text(const Route& route) {
    if (route.empty()) return {};
    return route_to_json(route).dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

Route route_of_json_text(const std::string& text, const std::string& where) {
    if (text.empty()) return {};
    if (text.size() > kMaxStoredRouteLegs * (kMaxLegTextBytes + 1024)) refuse(where, "is too large");
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) refuse(where, "is not valid JSON");
    if (!j.is_array()) refuse(where, "is not a list");
    if (j.size() > kMaxStoredRouteLegs)
        refuse(where, "has " + std::to_string(j.size()) + " legs, more than " + std::to_string(kMaxStoredRouteLegs));
    Route route;
    route.reserve(j.size());
    for (const auto& leg : j) {
        if (!leg.is_object()) refuse(where, "has a leg that is not an object");
        route.push_back({leg_field(leg, "step", 1024, where), leg_field(leg, "text", kMaxLegTextBytes, where)});
    }
    return route;
}

}  // namespace t5s
