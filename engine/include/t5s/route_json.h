#pragma once
// A recipe candidate's route (t5s/route.h) as JSON: [{"step": ..., "text": ...}, ...] ([] for an
// empty route). The one builder of that shape: live output (`generate --json`, `serve`, Label
// Studio's predictions) puts it in place, and the history stores its text (route_json_text,
// t5s/history_store.h). Torch-free (t5s_core).
#include <nlohmann/json.hpp>

#include "t5s/route.h"

namespace t5s {

nlohmann::json route_to_json(const Route& route);

}  // namespace t5s
