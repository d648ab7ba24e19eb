#include "t5s/generation_options.h"

#include <algorithm>
#include <cmath>

#include "t5s/error.h"

namespace t5s {

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
}

GenerationOptions merge_step_settings(GenerationOptions running, const GenerationOptions& live) {
    running.temperature = live.temperature;
    running.top_k = live.top_k;
    running.top_p = live.top_p;
    running.repetition_penalty = live.repetition_penalty;
    running.no_repeat_ngram_size = live.no_repeat_ngram_size;
    running.length_penalty = live.length_penalty;
    running.min_new_tokens = std::min(live.min_new_tokens, running.max_new_tokens);
    return running;
}

}  // namespace t5s
