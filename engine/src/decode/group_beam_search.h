#pragma once
// Group (diverse) beam search: a port of transformers' _group_beam_search with its BeamSearchScorer
// and BeamHypotheses (4.55, the last release with it built in), same sequences and scores.
//
// The num_beams beams of an input form num_beam_groups groups of num_beams / num_beam_groups
// beams. At each step the groups choose one after another: a group's log-probabilities go through
// the Hamming diversity penalty (diversity_penalty per earlier group of the same input that took
// the token at this step), then the other logits processors, then its own top-k and its own list
// of finished hypotheses, each as large as the group. The inputs' best hypotheses across all their
// groups are the results.
#include <ATen/ATen.h>

#include <vector>

#include "decode/beam_search.h"

namespace t5s {

// HF HammingDiversityLogitsProcessor on one group's scores [inputs * group_size, V] (each input's
// rows together): `previous` [inputs, k] holds the tokens the earlier groups of each input took at
// this step (k = 0: nothing to do); every row of input i loses penalty x (times its token appears in
// previous[i]), computed in float32 as transformers does.
void apply_hamming_diversity(at::Tensor& scores, const at::Tensor& previous, float penalty);

class GroupBeamSearch final : public BeamSearch {
public:
    GroupBeamSearch(int64_t inputs, const GenerationOptions& options, const ModelConfig& config, at::Device device,
                    KernelIsa vocab);

    at::Tensor last_tokens() const override;
    at::Tensor step(at::Tensor logits, const GenerationOptions& options) override;
    std::vector<std::vector<DecodedSequence>> results(int num_return_sequences) const override;

    // transformers' BeamHypotheses: the best `size` finished hypotheses of one group of one input,
    // in the order transformers keeps them (ties rank by that order).
    struct Hypotheses {
        struct Entry {
            double score;          // sum of log-probabilities / generated length^length_penalty
            std::vector<int> ids;  // without the decoder start token; ends with </s> when produced
        };
        std::vector<Entry> beams;
        double worst = 1e9;
        void add(std::vector<int> ids, double sum_logprobs, int64_t generated, double length_penalty, size_t size);
        bool is_done(double best_sum_logprobs, int64_t generated, double length_penalty, bool early_stopping, size_t size) const;
    };

private:
    // What one step decides per row: the token it takes, the row it continues, its new score.
    struct Choice {
        std::vector<int64_t> tokens, sources;
        std::vector<float> scores;
    };
    void step_group(int64_t group, const at::Tensor& log_probs, const at::Tensor& sequences, const GenerationOptions& options,
                    Choice* choice);
    void choose(int64_t group, const at::Tensor& top_scores, const at::Tensor& top_ids, const at::Tensor& sequences,
                Choice* choice);
    std::vector<int> row_ids(const at::Tensor& host_sequences, int64_t row, bool ended) const;
    bool every_row_stops() const;

    int64_t G_, gs_;                      // groups per input, beams per group
    at::Tensor sequences_;                // [rows, max_length] (start token first), cur_len_ of them set
    std::vector<float> beam_scores_;      // [rows] running sums of log-probabilities
    std::vector<at::Tensor> group_rows_;  // per group: its rows, input by input [inputs * group_size]
    std::vector<Hypotheses> finished_;    // per input and group: [input * groups + group]
    std::vector<char> group_done_;        // likewise
};

}  // namespace t5s
