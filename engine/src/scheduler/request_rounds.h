#pragma once
// The quality side of one served request (t5s/scheduler.h): each input's rounds go through the
// steps generate_scored takes (quality/scored_rounds.h) — no_copy / distinct, the scores (the
// scheduler scores every request's rounds that finished in one step together), another round while the filters
// leave too few, the final selection and ranking — so a served result equals `generate`'s. Also
// says which candidates are settled (final whatever later rounds add) for streaming.
// Torch-free; the scheduler thread owns it.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "quality/scored_rounds.h"

namespace t5s::scheduler {

struct FinishedRound {
    size_t input = 0;                   // which text of the request
    int round = 0;                      // 0 = the first
    std::vector<Candidate> candidates;  // decoded (text set), in row order
};

struct RoundsOutcome {
    std::vector<std::pair<size_t, int>> retries;        // (input, round) to decode next
    std::vector<size_t> finished;                       // inputs whose result is now final
    std::vector<std::pair<size_t, Candidate>> settled;  // candidates settled in this step, in result order
};

class RequestRounds {
public:
    // `texts` without the task prefix; `spans` their protected spans (empty: none given; else one
    // list per text); `options` complete (seed resolved). `embedder` may be null. Plans the spans
    // (InvalidArgument on bad spans or settings).
    RequestRounds(const std::vector<std::string>& texts, const std::vector<std::vector<Span>>& spans,
                  const GenerationOptions& options, const Embedder* embedder);

    // Protected spans: whether any text has some; what to encode for text i (spans masked); the
    // spans in text i; a finished round's candidates of text i decoded (spans restored).
    bool protects() const;
    const std::string& masked(size_t input) const { return inputs_[input].plan.masked; }
    std::vector<Span> source_spans(size_t input) const { return t5s::source_spans(inputs_[input]); }
    void decode(const Tokenizer& tokenizer, size_t input, std::vector<Candidate>* candidates) const {
        decode_round(tokenizer, inputs_[input], options_, candidates);
    }

    // The rounds of this request that finished in one decoding step, screened (no_copy /
    // distinct): their candidates, for score_round together with other requests' (sets
    // (*results)[input].rounds).
    std::vector<RoundCandidates> screen(std::vector<FinishedRound> rounds, std::vector<GenerationResult>* results);
    // Once they are scored: another round where the filters left too few, else the final selection
    // into (*results)[input] (candidates, dropped, diversity); the candidates settled meanwhile.
    RoundsOutcome decide(std::vector<GenerationResult>* results);
    // A running request's settings changed: the per-step ones (filters, ranking) of `live` apply
    // to the rounds not yet decided, as in generate_scored.
    void merge_live(const GenerationOptions& live);

private:
    GenerationOptions options_;
    bool has_embedder_;
    RankBy rank_key_ = RankBy::None;
    int rounds_allowed_;
    std::vector<InputRounds> inputs_;
    std::vector<size_t> streamed_;                  // per input: settled candidates already handed out
    std::vector<std::pair<size_t, int>> screened_;  // (input, round) between screen() and decide()
};

}  // namespace t5s::scheduler
