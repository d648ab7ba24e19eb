#pragma once
// Contrastive search (transformers' penalty_alpha with top_k > 1, no sampling, one beam; Su et al.,
// "A Contrastive Framework for Neural Text Generation") as a state machine of one decoding step at a
// time, which the batch decoder (decode/batch_decoder.h) drives per group of inputs over rows of the
// shared batch, as it drives a BeamSearch.
//
// An input holds k = top_k rows. Each step the decoder runs its k candidate tokens (the first step:
// the decoder start token, k times); the candidate whose (1 - alpha) * probability - alpha * (its
// largest cosine similarity with the hidden states of the tokens before, the start token's
// included) is highest is taken; its logits, after the processors, give the next k candidates, and
// its cache row is the one all k rows continue. That is transformers 4.55's _contrastive_search
// (the cache expanded k times, _ranking_fast) computed with the same tensor operations, so the
// token ids are the same.
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "decode/stop_strings.h"
#include "t5s/generation_options.h"

namespace t5s {

// Whether options decode by contrastive search: is_contrastive_search (t5s/generation_options.h).

class ContrastiveSearch {
public:
    // The logits processors (and the sentinel guard) on `logits` [n, vocab] of the inputs `inputs`
    // (indices into this search's inputs), whose tokens so far are `sequences` [n, 1 + generated].
    using Process = std::function<void(at::Tensor& logits, const at::Tensor& sequences, const std::vector<int64_t>& inputs)>;

    struct Finished {
        int64_t input = 0;
        std::vector<int> ids;  // without the decoder start token; ends with </s> when produced
        double score = 0.0;    // sum of the taken tokens' log-probabilities after the processors
    };
    struct StepResult {
        std::vector<int64_t> continued;  // per row of the next step: the row of this step whose cache it continues
        std::vector<Finished> finished;  // inputs that ended in this step
    };

    // `inputs` inputs of `top_k` rows each (rows [i*k, (i+1)*k) are the i-th input still decoding).
    ContrastiveSearch(int64_t inputs, int64_t top_k, int64_t start_token, int64_t eos, int max_new_tokens, at::Device device);

    // transformers' stop_strings and max_time (decode/stop_strings.h): like </s>, they end an input
    // once its taken token is appended.
    void set_stop_criteria(StopCriteria stop) { stop_ = std::move(stop); }
    int64_t top_k() const { return k_; }
    int64_t rows() const { return static_cast<int64_t>(alive_.size()) * k_; }
    // The token each row feeds to the decoder at this step [rows()].
    at::Tensor last_tokens() const { return tokens_; }
    // The inputs still decoding, in row order.
    const std::vector<int64_t>& alive() const { return alive_; }
    // One step: `logits` [rows, vocab] float32 and `hidden` [rows, d_model] (the decoder's final
    // hidden states) of the rows' tokens. `penalty_alpha` may change between steps (live settings).
    StepResult step(const at::Tensor& logits, const at::Tensor& hidden, float penalty_alpha, const Process& process);

private:
    at::Tensor select(const at::Tensor& hidden, float penalty_alpha) const;
    std::vector<Finished> take_finished(std::vector<int64_t>* kept) const;
    void keep(const std::vector<int64_t>& kept);
    void propose(at::Tensor logits, const Process& process);

    int64_t k_, eos_;
    int max_new_tokens_;
    at::Device device_;
    StopCriteria stop_;
    std::vector<int64_t> alive_;   // inputs still decoding
    std::vector<double> scores_;   // per alive input
    at::Tensor sequences_;         // [alive, 1 + generated] long, the start token first
    at::Tensor context_;           // [alive, 1 + generated, d]: each token's final hidden state
    at::Tensor tokens_;            // [alive * k] the candidates the rows feed next
    at::Tensor probs_, logprobs_;  // [alive, k] the candidates' probabilities and log-probabilities
    bool started_ = false;         // the start token has been decoded
};

}  // namespace t5s
