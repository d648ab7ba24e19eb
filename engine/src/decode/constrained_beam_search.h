#pragma once
// Constrained beam search (force_words_ids): a port of transformers 4.55's _constrained_beam_search
// with its ConstrainedBeamSearchScorer (the last release with it built in), same sequences and scores.
//
// Each step is beam search's (the top 2 x num_beams continuations over an input's beams; </s> among
// the top num_beams ends a hypothesis, but only one that holds every constraint) until num_beams
// continuations are chosen. Then, per input, the continuations that advance each beam's constraints
// (decode/beam_constraints.h) join them, and num_beams are taken by progress: every "bank" (how much
// of the constraints a sequence holds) puts forward its best before any puts forward a second. At the
// end, the running beams that hold every constraint join the finished ones; when fewer than
// num_return_sequences do, all running beams join. Like transformers', the search also stops when
// its stopping criteria hold for every row at once (</s> or a stop string ends each), or at max_time.
#include <ATen/ATen.h>

#include <vector>

#include "decode/beam_search.h"
#include "decode/group_beam_search.h"

namespace t5s {

class ConstrainedBeamSearch final : public BeamSearch {
public:
    ConstrainedBeamSearch(int64_t inputs, const GenerationOptions& options, const ModelConfig& config, at::Device device,
                          KernelIsa vocab);

    at::Tensor last_tokens() const override;
    at::Tensor step(at::Tensor logits, const GenerationOptions& options) override;
    std::vector<std::vector<DecodedSequence>> results(int num_return_sequences) const override;

    // A row's continuation: its score (sum of log-probabilities), token and the row it continues.
    struct Continuation {
        float score;
        int token;
        int64_t source;
    };
    // transformers' step_sentence_constraint ranking: `candidates` (the first of them, plain beam
    // search's picks) with `banks` (one per candidate) reordered so that each run of equal banks in
    // descending bank * 100 + score order contributes its best, then its second best, ...; the
    // first `keep` of that order.
    static std::vector<Continuation> rank_by_bank(const std::vector<Continuation>& candidates, const std::vector<int>& banks,
                                                  size_t keep);

private:
    using Hypotheses = GroupBeamSearch::Hypotheses;  // transformers' BeamHypotheses, shared with group search

    std::vector<Continuation> pick(int64_t input, const float* top_scores, const int64_t* top_ids);
    std::vector<Continuation> advance(int64_t input, std::vector<Continuation> picked, const at::Tensor& scores) const;
    std::vector<int> tokens_of(int64_t row) const;
    std::vector<int> running_ids(int64_t row) const;
    bool every_row_stops() const;

    ForcedWords constraints_;
    std::vector<std::vector<int>> sequences_;  // [rows] start token first (host: the constraints read them every step)
    std::vector<float> beam_scores_;           // [rows] running sums of log-probabilities
    std::vector<Hypotheses> finished_;         // per input
    std::vector<char> input_done_;             // per input
};

}  // namespace t5s
