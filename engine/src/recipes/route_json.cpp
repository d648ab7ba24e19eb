// A route as JSON (t5s/route_json.h).
#include "t5s/route_json.h"

namespace t5s {

nlohmann::json route_to_json(const Route& route) {
    nlohmann::json legs = nlohmann::json::array();
    for (const auto& leg : route) legs.push_back({{"step", leg.step}, {"text", leg.text}});
    return legs;
}

}  // namespace t5s
