#pragma once
// Beam search as a state machine of one decoding step at a time. The batch decoder
// (decode/batch_decoder.h) drives one per group of inputs over rows of a shared batch:
// PlainBeamSearch (a port of transformers' vectorised beam search: same sequences and scores), or
// with num_beam_groups > 1 GroupBeamSearch (decode/group_beam_search.h, transformers' diverse one),
// or with force_words_ids ConstrainedBeamSearch (decode/constrained_beam_search.h).
#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "decode/stop_strings.h"
#include "spans/sentinel_guard.h"
#include "t5s/generation_options.h"
#include "t5s/kernel_policy.h"
#include "t5s/model_config.h"

namespace t5s {

struct DecodedSequence {
    std::vector<int> ids;  // without the decoder start token; ends with </s> when produced
    double score = 0.0;
};

// The search over `inputs` inputs of options.num_beams rows each (rows [i*beams, (i+1)*beams) are
// input i's).
class BeamSearch {
public:
    virtual ~BeamSearch() = default;
    int64_t rows() const { return B_ * nb_; }
    // Protected spans: guard.required[i] for input i's beams (logits_processors.h's sentinel guard).
    void set_sentinel_guard(spans::SentinelGuard guard) { guard_ = std::move(guard); }
    // Each input's ids, for the encoder processors (encoder_no_repeat_ngram_size, ...).
    void set_sources(std::vector<std::vector<int>> sources) { sources_ = std::move(sources); }
    // transformers' stop_strings and max_time (decode/stop_strings.h).
    void set_stop_criteria(StopCriteria stop) { stop_ = std::move(stop); }
    // The token each row feeds to the decoder at this step [rows].
    virtual at::Tensor last_tokens() const = 0;
    // One step: `logits` [rows, vocab] float32 from the decoder (consumed in place); `options`
    // may carry hot-swapped step settings. Returns, per row, the row (of this search) whose cache
    // it continues: the caller reorders its decoder cache by it.
    virtual at::Tensor step(at::Tensor logits, const GenerationOptions& options) = 0;
    bool done() const { return done_; }
    // Best num_return_sequences hypotheses per input.
    virtual std::vector<std::vector<DecodedSequence>> results(int num_return_sequences) const = 0;

protected:
    // What every search takes from the request and the model, set once here.
    BeamSearch(int64_t inputs, const GenerationOptions& options, const ModelConfig& config, at::Device device, KernelIsa vocab);

    // The logits processors, then the sentinel guard, on `scores` [inputs * rows_per_input, vocab]
    // whose every block of rows_per_input rows is one input's (its beams, or one group of them).
    void process_rows(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& options, int64_t rows_per_input,
                      bool sequence_bias_done = false) const;

    KernelIsa vocab_;                  // the in-place log-softmax's kernels
    int64_t B_, nb_, V_, max_length_;  // inputs, beams per input, vocabulary size, start token + max_new_tokens
    int64_t eos_, pad_;
    double length_penalty_;
    bool early_;  // early_stopping
    at::Device device_;
    int64_t cur_len_ = 1;  // tokens of every row so far, the decoder start token included
    bool done_ = false;
    spans::SentinelGuard guard_;
    StopCriteria stop_;
    std::vector<std::vector<int>> sources_;  // per input
};

// The search `options` ask for. `vocab`: the kernel policy's in-place log-softmax
// (KernelPolicy::vocab; Off: ATen's).
std::unique_ptr<BeamSearch> make_beam_search(int64_t inputs, const GenerationOptions& options, const ModelConfig& config,
                                             at::Device device, KernelIsa vocab);

class PlainBeamSearch final : public BeamSearch {
public:
    PlainBeamSearch(int64_t inputs, const GenerationOptions& options, const ModelConfig& config, at::Device device,
                    KernelIsa vocab);

    at::Tensor last_tokens() const override;
    at::Tensor step(at::Tensor logits, const GenerationOptions& options) override;
    std::vector<std::vector<DecodedSequence>> results(int num_return_sequences) const override;

private:
    at::Tensor stop_string_hits(const at::Tensor& candidates) const;
    void fill_like_transformers(std::vector<DecodedSequence>& rows) const;

    int64_t keep_;  // the top-k continuations each step weighs: 2 x beams
    at::Tensor running_seqs_, seqs_, running_scores_, beam_scores_, finished_, heuristic_open_, running_beam_idx_;
    at::Tensor top_nb_mask_, batch_offset_;
    at::Tensor lengths_;  // [B, nb] of the finished hypotheses, start token included (a stop string ends one early)
};

}  // namespace t5s
