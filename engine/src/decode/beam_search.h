#pragma once
// Beam search as a state machine of one decoding step at a time (a port of transformers'
// vectorised beam search: same sequences and scores). The batch decoder (decode/batch_decoder.h)
// drives one per input over rows of a shared batch.
#include <ATen/ATen.h>

#include <vector>

#include "spans/sentinel_guard.h"
#include "t5s/generation_options.h"
#include "t5s/kernel_policy.h"
#include "t5s/model_config.h"

namespace t5s {

struct DecodedSequence {
    std::vector<int> ids;  // without the decoder start token; ends with </s> when produced
    double score = 0.0;
};

class BeamSearch {
public:
    // `inputs` inputs of options.num_beams rows each (rows [i*beams, (i+1)*beams) are input i's).
    // `vocab`: the kernel policy's in-place log-softmax (KernelPolicy::vocab; Off: ATen's).
    BeamSearch(int64_t inputs, const GenerationOptions& options, const ModelConfig& config, at::Device device, KernelIsa vocab);

    int64_t rows() const { return B_ * nb_; }
    // Protected spans: guard.required[i] for input i's beams (logits_processors.h's sentinel guard).
    void set_sentinel_guard(spans::SentinelGuard guard) { guard_ = std::move(guard); }
    // The token each row feeds to the decoder at this step [rows].
    at::Tensor last_tokens() const;
    // One step: `logits` [rows, vocab] float32 from the decoder (consumed in place); `options`
    // may carry hot-swapped step settings. Returns, per row, the row (of this search) whose cache
    // it continues: the caller reorders its decoder cache by it.
    at::Tensor step(at::Tensor logits, const GenerationOptions& options);
    bool done() const { return done_; }
    int steps() const { return static_cast<int>(cur_len_ - 1); }
    // Best num_return_sequences hypotheses per input.
    std::vector<std::vector<DecodedSequence>> results(int num_return_sequences) const;

private:
    KernelIsa vocab_;
    int64_t B_, nb_, V_, keep_, max_length_;
    int64_t eos_;
    double length_penalty_;
    bool early_;
    at::Tensor running_seqs_, seqs_, running_scores_, beam_scores_, finished_, heuristic_open_, running_beam_idx_;
    at::Tensor top_nb_mask_, batch_offset_;
    spans::SentinelGuard guard_;
    int64_t cur_len_ = 1;
    bool done_ = false;
};

}  // namespace t5s
