#pragma once
// Shared output helpers for the subcommands: JSON on stdout with --json, readable text otherwise.
#include <nlohmann/json.hpp>
#include <string>

#include "t5s/device.h"
#include "t5s/model.h"
#include "t5s/route_json.h"

namespace t5s::cli {

void print_json(const nlohmann::json& j);
nlohmann::json to_json(const ModelInfo& info);
nlohmann::json profile_json(const DeviceProfile& profile);
// One input's result as `generate --json` prints it (and `serve` answers): input, candidates with
// their scores, seed, diversity; with keep_dropped also the dropped candidates and their reasons.
// With protected spans (result.spans not empty) also the input's "spans" and each candidate's
// "spans" (code points into its text) and "forced_spans".
nlohmann::json result_json(const GenerationResult& result, bool keep_dropped = false);
// A candidate's "spans" and "forced_spans".
void add_candidate_spans(const Candidate& c, nlohmann::json* j);
// Every score of one candidate (t5s/score_names.h: "similarity", ...), null where not computed.
void add_candidate_scores(const Candidate& candidate, nlohmann::json* j);
// A recipe candidate's "route": [{"step", "text"}, ...] (t5s/route_json.h; nothing for a plain
// generation's).
void add_candidate_route(const Candidate& c, nlohmann::json* j);
// "diversity" of a result and, with keep_dropped, "dropped": [{text, score, reason, scores...}].
void add_result_scores(const GenerationResult& result, bool keep_dropped, nlohmann::json* j);

}  // namespace t5s::cli
