#pragma once
// The quality flags of `generate` (scores, filters, ranking, embedder; declared in its flag table)
// and the JSON fields they print.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/args.h"
#include "t5s/embedder.h"
#include "t5s/generation_options.h"

namespace t5s::cli {

// --min-similarity, --max-similarity, --min-change, --max-change, --min-back-score, --near-duplicate, --rank.
void apply_quality_flags(const Args& args, GenerationOptions* options);

// --embedder DIR: the sentence-embedding model, or null without the flag.
std::unique_ptr<Embedder> embedder_from_flags(const Args& args, const RuntimeOptions& runtime);

// "similarity", "back_score", "change", "fluency" of one candidate (null where not computed).
void add_candidate_scores(const Candidate& candidate, nlohmann::json* j);
// "diversity" of a result and, with keep_dropped, "dropped": [{text, score, reason, scores...}].
void add_result_scores(const GenerationResult& result, bool keep_dropped, nlohmann::json* j);

}  // namespace t5s::cli
