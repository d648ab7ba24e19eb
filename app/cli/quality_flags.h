#pragma once
// The embedder flag of `generate` and the JSON fields of the quality scores (the filter and ranking
// flags are generation options: cli/generation_flags.h).
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/args.h"
#include "t5s/embedder.h"
#include "t5s/generation_options.h"

namespace t5s::cli {

// --embedder DIR: the sentence-embedding model, or null without the flag.
std::unique_ptr<Embedder> embedder_from_flags(const Args& args, const RuntimeOptions& runtime);

// "similarity", "back_score", "change", "fluency" of one candidate (null where not computed).
void add_candidate_scores(const Candidate& candidate, nlohmann::json* j);
// "diversity" of a result and, with keep_dropped, "dropped": [{text, score, reason, scores...}].
void add_result_scores(const GenerationResult& result, bool keep_dropped, nlohmann::json* j);

}  // namespace t5s::cli
