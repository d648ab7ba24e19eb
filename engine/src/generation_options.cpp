#include "t5s/generation_options.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "spans/span_detect.h"
#include "t5s/error.h"

namespace t5s {
namespace {

template <class Bad>
void validate_quality_filters(const GenerationOptions& o, const Bad& bad) {
    static const char* const kRanks[] = {"auto", "similarity", "back_score", "fluency", "none"};
    if (std::find(std::begin(kRanks), std::end(kRanks), o.rank) == std::end(kRanks))
        bad("rank must be auto, similarity, back_score, fluency or none (got '" + o.rank + "')");
    auto in_range = [&](const std::optional<double>& v, const char* name, double lo, double hi, bool lo_open, const char* range) {
        if (v && (!std::isfinite(*v) || *v > hi || *v < lo || (lo_open && *v == lo)))
            bad(std::string(name) + " must be in " + range + " (got " + std::to_string(*v) + ")");
    };
    in_range(o.min_similarity, "min_similarity", -1.0, 1.0, false, "[-1, 1]");
    in_range(o.max_similarity, "max_similarity", -1.0, 1.0, false, "[-1, 1]");
    in_range(o.min_change, "min_change", 0.0, 1.0, false, "[0, 1]");
    in_range(o.max_change, "max_change", 0.0, 1.0, false, "[0, 1]");
    in_range(o.near_duplicate, "near_duplicate", 0.0, 1.0, true, "(0, 1]");
    if (o.min_back_score && (!std::isfinite(*o.min_back_score) || *o.min_back_score > 0.0))
        bad("min_back_score must be a finite log-probability <= 0 (got " + std::to_string(*o.min_back_score) + ")");
    if (o.min_similarity && o.max_similarity && *o.min_similarity > *o.max_similarity)
        bad("min_similarity must be <= max_similarity");
    if (o.min_change && o.max_change && *o.min_change > *o.max_change) bad("min_change must be <= max_change");
}

}  // namespace

void validate_generation_options(const GenerationOptions& o) {
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "invalid generation setting: " + what); };
    if (o.max_new_tokens < 1) bad("max_new_tokens must be >= 1 (got " + std::to_string(o.max_new_tokens) + ")");
    if (o.min_new_tokens < 0) bad("min_new_tokens must be >= 0");
    if (o.min_new_tokens > o.max_new_tokens) bad("min_new_tokens must be <= max_new_tokens");
    if (o.num_beams < 1) bad("num_beams must be >= 1");
    if (o.num_return_sequences < 1) bad("num_return_sequences must be >= 1");
    if (!o.do_sample && o.num_return_sequences > o.num_beams) {
        bad("num_return_sequences (" + std::to_string(o.num_return_sequences) + ") must be <= num_beams (" +
            std::to_string(o.num_beams) + ") without sampling");
    }
    if (o.do_sample && o.num_beams > 1) bad("beam sampling is not supported: use num_beams=1 with sampling");
    if (!std::isfinite(o.temperature) || (o.do_sample && o.temperature <= 0.0f)) bad("temperature must be > 0 when sampling");
    if (!std::isfinite(o.top_p) || o.top_p <= 0.0f || o.top_p > 1.0f) bad("top_p must be in (0, 1] (got " + std::to_string(o.top_p) + ")");
    if (o.top_k < 0) bad("top_k must be >= 0 (0 = off)");
    if (!std::isfinite(o.repetition_penalty) || o.repetition_penalty <= 0.0f) bad("repetition_penalty must be > 0");
    if (o.no_repeat_ngram_size < 0) bad("no_repeat_ngram_size must be >= 0");
    if (!std::isfinite(o.length_penalty)) bad("length_penalty must be finite");
    if (o.batch_size < 1) bad("batch_size must be >= 1");
    if (o.max_rounds < 1) bad("max_rounds must be >= 1");
    if (o.max_source_tokens < 0) bad("max_source_tokens must be >= 0 (0 = the model's limit)");
    validate_quality_filters(o, bad);
    spans::parse_protect(o.protect);
    spans::check_protect_regex(o.protect_regex);
}

bool imply_sampling(GenerationOptions* options, std::vector<std::string>* named) {
    auto has = [&](const char* name) { return std::find(named->begin(), named->end(), name) != named->end(); };
    if (has("do_sample") || has("num_beams") || options->do_sample || options->num_beams > 1) return false;
    if (!has("temperature") && !has("top_k") && !has("top_p")) return false;
    options->do_sample = true;
    named->push_back("do_sample");
    return true;
}

GenerationOptions merge_step_settings(GenerationOptions running, const GenerationOptions& live) {
    running.temperature = live.temperature;
    running.top_k = live.top_k;
    running.top_p = live.top_p;
    running.repetition_penalty = live.repetition_penalty;
    running.no_repeat_ngram_size = live.no_repeat_ngram_size;
    running.length_penalty = live.length_penalty;
    running.min_new_tokens = std::min(live.min_new_tokens, running.max_new_tokens);
    // Filters and ranking apply after decoding: the values live at that moment count.
    running.rank = live.rank;
    running.min_similarity = live.min_similarity;
    running.max_similarity = live.max_similarity;
    running.min_change = live.min_change;
    running.max_change = live.max_change;
    running.min_back_score = live.min_back_score;
    running.near_duplicate = live.near_duplicate;
    running.model_scores = live.model_scores;
    return running;
}

}  // namespace t5s
