#pragma once
// The steps of quality-aware generation (t5s/candidate_scores.h) for one input whose rounds are
// decoded elsewhere: generate_scored runs them over Model::generate_ids, the serving scheduler over
// its shared batch. Both call these, so a served candidate gets exactly the scores, filters,
// ranking and rounds of `generate`. Torch-free.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spans/span_plan.h"
#include "t5s/embedder.h"
#include "t5s/generation_options.h"
#include "t5s/model.h"

namespace t5s {

// One input on its way through the rounds.
struct InputRounds {
    std::string source;                     // the text, without the task prefix
    std::vector<float> source_embedding;    // empty until the first round scored with an embedder
    std::set<std::string> seen;             // distinct: the normalised texts so far
    std::vector<Candidate> pool;            // scored candidates that passed no_copy / distinct, in decoding order
    std::vector<DroppedCandidate> dropped;  // copies, duplicates and lost spans so far, in order
    spans::SpanPlan plan;                   // its protected spans (masked source); inactive: none
    // Model-based scores by what the model saw (token ids): a candidate encoded as an earlier one
    // gets that score exactly, not one recomputed in another batch (see score_round).
    std::map<std::vector<int>, double> back_score_of;  // by the encoding of task prefix + candidate
    std::map<std::vector<int>, double> similarity_of;  // by the embedder's encoding of the candidate
};

// Plans the protected spans of input `text` (explicit spans from the row, detectors of `o`) into
// input->plan and sets input->source; returns what to encode (the masked text, no task prefix).
std::string plan_input(InputRounds* input, const std::string& text, const std::vector<Span>& spans, const GenerationOptions& o);
// The input's protected spans in the source, for GenerationResult::spans.
std::vector<Span> source_spans(const InputRounds& input);

// Sets text (spans restored), spans and forced_spans of one round's decoded candidates of `input`.
void decode_round(const Tokenizer& tokenizer, const InputRounds& input, const GenerationOptions& o,
                  std::vector<Candidate>* decoded);

// Rounds that may run: max_rounds when sampling with any filter on; without sampling a second
// round would repeat the first, so 1.
int rounds_allowed(const GenerationOptions& o);

// Throws InvalidArgument naming the setting when a similarity filter or rank has no embedder.
void require_scores_available(const GenerationOptions& o, const Embedder* embedder);

// One round's decoded candidates of `input` (text set): those holding U+FFFD or invalid UTF-8
// (DropReason::InvalidText, under drop_invalid_text), those that lost a protected span
// (DropReason::LostSpan), copies (Copy, under no_copy) and repeats (Duplicate, under distinct) go
// to input->dropped; the rest are returned in order, not yet scored.
std::vector<Candidate> screen_round(InputRounds* input, std::vector<Candidate> decoded, const GenerationOptions& o);

struct RoundCandidates {
    InputRounds* input = nullptr;
    std::vector<Candidate> candidates;           // from screen_round
    const GenerationOptions* options = nullptr;  // the input's settings (task prefix, fluency)
};

// Scores one round's candidates of several inputs — of one request or of several — in place
// (fluency, change; back_score in batched passes of up to rows_per_pass rows; with an embedder
// similarity, in one embedding call that also embeds the sources not embedded yet) and appends them
// to their inputs' pools. Where an input's model_scores is off, back_score and similarity are left
// out unless its filters or ranking read them. Candidates of one input that the model (or the
// embedder) sees as the same token ids share one score, computed once: a batched pass differs from
// another in the 7th digit, and that would order such a tie by batch composition, so that a request
// served among others could rank differently from the same request alone.
void score_round(const Model& model, const Embedder* embedder, std::vector<RoundCandidates>* round, int rows_per_pass);

// True while the filters leave fewer than num_return_sequences candidates of the pool.
bool needs_more(const InputRounds& input, const GenerationOptions& o, RankBy rank_key);

// The candidates the final selection keeps whatever later rounds add: without a ranking, the ones
// kept so far (later rounds only append after them, and near_duplicate only compares a candidate
// with better-ranked ones); with a ranking none, until the rounds end.
std::vector<Candidate> settled_candidates(const InputRounds& input, const GenerationOptions& o, RankBy rank_key);

// The final selection into `result`: candidates (ranked, at most num_return_sequences), dropped
// (copies and duplicates, then those the score filters and near_duplicate dropped), diversity.
void finish_result(InputRounds input, const GenerationOptions& o, RankBy rank_key, GenerationResult* result);

}  // namespace t5s
