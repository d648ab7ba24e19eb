#include "t5s/generation_options.h"

#include <algorithm>
#include <string>

#include "spans/span_detect.h"
#include "t5s/error.h"
#include "t5s/generation_fields.h"

namespace t5s {

namespace {

// Group beam search as transformers' GenerationConfig.validate and HammingDiversityLogitsProcessor
// refuse it: no sampling, whole groups, and a penalty exactly when there are groups.
void check_beam_groups(const GenerationOptions& o) {
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "invalid generation setting: " + what); };
    if (o.num_beam_groups == 1 && o.diversity_penalty == 0.0f) return;
    const std::string groups = std::to_string(o.num_beam_groups), beams = std::to_string(o.num_beams);
    if (o.do_sample) bad("num_beam_groups: group beam search does not sample (do_sample must be false)");
    if (o.num_beams % o.num_beam_groups != 0) bad("num_beam_groups (" + groups + ") must divide num_beams (" + beams + ")");
    if (o.num_beam_groups == 1) bad("diversity_penalty needs num_beam_groups > 1 (it penalises a group by the groups before it)");
    if (o.diversity_penalty == 0.0f)
        bad("diversity_penalty must be > 0 with num_beam_groups > 1, otherwise the groups are identical");
}

// Constrained beam search as transformers' GenerationConfig.validate, ConstrainedBeamSearchScorer
// and generate() refuse force_words_ids: beams, no sampling, no groups; each constraint non-empty,
// phrases of ids >= 0, and no alternative of a disjunctive one the start of (or equal to) another.
void check_forced_words(const GenerationOptions& o) {
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "invalid generation setting: " + what); };
    if (o.force_words_ids.empty() && o.force_words.empty()) return;
    const std::string name = o.force_words_ids.empty() ? "force_words" : "force_words_ids";
    if (o.do_sample) bad(name + ": constrained beam search does not sample (do_sample must be false)");
    if (o.num_beam_groups != 1) bad(name + ": constrained beam search has no beam groups (num_beam_groups must be 1)");
    if (o.num_beams <= 1) bad(name + ": constrained beam search needs num_beams > 1");
    for (size_t i = 0; i < o.force_words_ids.size(); ++i) {
        const ForcedWordsConstraint& c = o.force_words_ids[i];
        const std::string which = "force_words_ids: constraint " + std::to_string(i + 1);
        if (c.alternatives.empty() || (!c.disjunctive && c.alternatives.size() != 1))
            bad(which + " must be one list of token ids or a list of such lists");
        for (const auto& a : c.alternatives) {
            if (a.empty() || std::any_of(a.begin(), a.end(), [](int id) { return id < 0; }))
                bad(which + " holds an empty list or a negative id");
            for (const auto& other : c.alternatives) {
                if (&other != &a && a.size() <= other.size() && std::equal(a.begin(), a.end(), other.begin()))
                    bad(which + ": one alternative is the start of another, or the same (transformers refuses it)");
            }
        }
    }
}

}  // namespace

void validate_generation_options(const GenerationOptions& o) {
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "invalid generation setting: " + what); };
    if (const std::string outside = field_range_error(o); !outside.empty()) bad(outside);  // each field's own range
    // What involves more than one field:
    if (o.min_new_tokens > o.max_new_tokens) bad("min_new_tokens must be <= max_new_tokens");
    if (!o.do_sample && o.num_return_sequences > o.num_beams) {
        bad("num_return_sequences (" + std::to_string(o.num_return_sequences) + ") must be <= num_beams (" +
            std::to_string(o.num_beams) + ") without sampling: set do_sample, or num_beams to " +
            std::to_string(o.num_return_sequences));
    }
    check_forced_words(o);  // before the general refusals: transformers names force_words_ids first
    if (o.do_sample && o.num_beams > 1) bad("beam sampling is not supported: use num_beams=1 with sampling");
    check_beam_groups(o);
    if (o.do_sample && o.temperature <= 0.0f) bad("temperature must be > 0 when sampling");
    if (o.min_similarity && o.max_similarity && *o.min_similarity > *o.max_similarity)
        bad("min_similarity must be <= max_similarity");
    if (o.min_change && o.max_change && *o.min_change > *o.max_change) bad("min_change must be <= max_change");
    spans::parse_protect(o.protect);
    spans::check_protect_regex(o.protect_regex);
}

bool imply_sampling(GenerationOptions* options, std::vector<std::string>* named) {
    auto has = [&](const char* name) { return std::find(named->begin(), named->end(), name) != named->end(); };
    if (has("do_sample") || has("num_beams") || options->do_sample || options->num_beams > 1) return false;
    if (options->penalty_alpha > 0.0f) return false;  // top_k is contrastive search's width there, not a sampling knob
    if (!has("temperature") && !has("top_k") && !has("top_p") && !has("min_p") && !has("typical_p") && !has("epsilon_cutoff") &&
        !has("eta_cutoff"))
        return false;
    options->do_sample = true;
    named->push_back("do_sample");
    return true;
}

bool is_contrastive_search(const GenerationOptions& o) {
    return o.force_words_ids.empty() && o.force_words.empty() && o.num_beams == 1 && !o.do_sample && o.top_k > 1 &&
           o.penalty_alpha > 0.0f;
}

int decoding_rows_per_input(const GenerationOptions& o) {
    if (o.num_beams > 1) return o.num_beams;
    if (is_contrastive_search(o)) return o.top_k;  // each input's candidates
    return o.do_sample ? o.num_return_sequences : 1;
}

bool imply_contrastive_top_k(GenerationOptions* options, std::vector<std::string>* named) {
    auto has = [&](const char* name) { return std::find(named->begin(), named->end(), name) != named->end(); };
    if (options->penalty_alpha <= 0.0f || has("top_k") || options->top_k != 0 || options->do_sample || options->num_beams > 1)
        return false;
    if (!options->force_words_ids.empty() || !options->force_words.empty()) return false;
    options->top_k = 50;  // transformers' GenerationConfig default
    named->push_back("top_k");
    return true;
}

GenerationOptions merge_step_settings(GenerationOptions running, const GenerationOptions& live) {
    const int max_new_tokens = running.max_new_tokens;  // the request's own length stays
    running = with_live_fields(running, live, Live::EveryStep);
    running.min_new_tokens = std::min(live.min_new_tokens, max_new_tokens);
    return running;
}

}  // namespace t5s
