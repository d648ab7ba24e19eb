#include "decode/beam_search.h"

#include <algorithm>
#include <cmath>

#include "decode/constrained_beam_search.h"
#include "decode/group_beam_search.h"
#include "decode/logits_processors.h"
#include "torch/vocab_kernels.h"

namespace t5s {
namespace {

constexpr int64_t kPromptLength = 1;  // the decoder start token

// tensor [B, K, ...], indices [B, K'] -> [B, K', ...]
at::Tensor gather_beams(const at::Tensor& t, const at::Tensor& indices) {
    std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
    at::Tensor idx = indices;
    for (int64_t d = 2; d < t.dim(); ++d) {
        idx = idx.unsqueeze(-1);
        shape.push_back(t.size(d));
    }
    return at::take_along_dim(t, idx.expand(shape), 1);
}

}  // namespace

BeamSearch::BeamSearch(int64_t inputs, const GenerationOptions& o, const ModelConfig& cfg, at::Device dev, KernelIsa vocab)
    : vocab_(vocab),
      B_(inputs),
      nb_(o.num_beams),
      V_(cfg.vocab_size),
      max_length_(o.max_new_tokens + kPromptLength),
      eos_(cfg.eos_token_id),
      pad_(cfg.pad_token_id),
      length_penalty_(o.length_penalty),
      early_(o.early_stopping),
      device_(dev) {}

void BeamSearch::process_rows(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& o, int64_t rows_per_input,
                              bool sequence_bias_done) const {
    const int64_t rows = scores.size(0);
    RowSources sources;  // row r is input r / rows_per_input's
    for (int64_t r = 0; r < rows && !sources_.empty(); ++r) sources.push_back(&sources_[static_cast<size_t>(r / rows_per_input)]);
    process_logits(scores, sequences, o, eos_, false, sources, sequence_bias_done);
    if (guard_.range.empty()) return;
    std::vector<const std::vector<int>*> required;
    for (int64_t r = 0; r < rows; ++r) required.push_back(&guard_.required[static_cast<size_t>(r / rows_per_input)]);
    const int max_new_tokens = static_cast<int>(max_length_ - kPromptLength);
    apply_sentinel_guard(scores, sequences, required, guard_.range, max_new_tokens, eos_);
}

std::unique_ptr<BeamSearch> make_beam_search(int64_t inputs, const GenerationOptions& o, const ModelConfig& cfg, at::Device dev,
                                             KernelIsa vocab) {
    if (!o.force_words_ids.empty()) return std::make_unique<ConstrainedBeamSearch>(inputs, o, cfg, dev, vocab);
    if (o.num_beam_groups > 1) return std::make_unique<GroupBeamSearch>(inputs, o, cfg, dev, vocab);
    return std::make_unique<PlainBeamSearch>(inputs, o, cfg, dev, vocab);
}

// The top candidates [B, 2 x beams, max_length] whose first cur_len_ + 1 tokens end with a stop string.
at::Tensor PlainBeamSearch::stop_string_hits(const at::Tensor& candidates) const {
    const at::Tensor host = candidates.narrow(2, 0, cur_len_ + 1).to(at::kCPU, at::kLong).contiguous();
    const std::vector<char> ends = stop_.rows_ending(host.data_ptr<int64_t>(), host.size(0) * host.size(1), cur_len_ + 1);
    return at::tensor(std::vector<uint8_t>(ends.begin(), ends.end()))
        .to(at::kBool)
        .view({host.size(0), host.size(1)})
        .to(candidates.device());
}

PlainBeamSearch::PlainBeamSearch(int64_t inputs, const GenerationOptions& o, const ModelConfig& cfg, at::Device dev,
                                 KernelIsa vocab)
    : BeamSearch(inputs, o, cfg, dev, vocab), keep_(2 * o.num_beams) {
    // One EOS token: beams_to_keep = max(2, 1 + n_eos) * num_beams.
    auto f32 = at::TensorOptions().dtype(at::kFloat).device(dev);
    auto i64 = at::TensorOptions().dtype(at::kLong).device(dev);
    running_seqs_ = at::full({B_, nb_, max_length_}, cfg.pad_token_id, i64);
    running_seqs_.select(2, 0).fill_(cfg.decoder_start_token_id);
    seqs_ = running_seqs_.clone();
    running_scores_ = at::zeros({B_, nb_}, f32);
    running_scores_.narrow(1, 1, nb_ - 1).fill_(-1e9);
    beam_scores_ = at::full({B_, nb_}, -1e9, f32);
    finished_ = at::zeros({B_, nb_}, f32.dtype(at::kBool));
    heuristic_open_ = at::ones({B_, 1}, f32.dtype(at::kBool));
    running_beam_idx_ = at::full({B_, nb_, max_length_ - kPromptLength}, -1, i64);
    top_nb_mask_ = at::cat({at::ones({nb_}, f32.dtype(at::kBool)), at::zeros({keep_ - nb_}, f32.dtype(at::kBool))});
    batch_offset_ = at::arange(B_, i64).view({-1, 1}) * nb_;
    lengths_ = at::full({B_, nb_}, max_length_, i64);
}

at::Tensor PlainBeamSearch::last_tokens() const { return running_seqs_.select(2, cur_len_ - 1).reshape({B_ * nb_}); }

at::Tensor PlainBeamSearch::step(at::Tensor logits, const GenerationOptions& o) {
    const int64_t B = B_, nb = nb_, V = V_;
    at::Tensor flat_seqs = running_seqs_.narrow(2, 0, cur_len_).reshape({B * nb, cur_len_});
    at::Tensor log_probs = logits;  // this step's own tensor: normalised in place where possible
    if (!log_softmax_inplace_cpu(log_probs, vocab_)) log_probs = at::log_softmax(logits, -1);
    process_rows(log_probs, flat_seqs, o, nb);
    // In place: log_probs is this step's own tensor (saves a [B*beams, vocab] write per step).
    log_probs.view({B, nb, V}).add_(running_scores_.unsqueeze(2));
    log_probs = log_probs.view({B, nb * V});

    // Top-k continuations over all beams.
    auto [topk_lp, topk_idx] = topk_distinct_fast(log_probs, keep_);
    at::Tensor topk_beam = at::div(topk_idx, V, "floor");
    at::Tensor topk_ids = topk_idx.remainder(V);
    at::Tensor topk_seqs = gather_beams(running_seqs_, topk_beam);
    at::Tensor topk_beam_idx = gather_beams(running_beam_idx_, topk_beam);
    topk_seqs.select(2, cur_len_).copy_(topk_ids);
    topk_beam_idx.select(2, cur_len_ - kPromptLength).copy_(topk_beam + batch_offset_);

    // Stopping criteria: EOS, a stop string, or the maximum length or time reached.
    at::Tensor hits = (topk_ids == eos_);
    if (stop_.strings) hits |= stop_string_hits(topk_seqs);
    if (cur_len_ + 1 >= max_length_ || stop_.time_up()) hits.fill_(true);

    // Running beams for the next step: best non-finished continuations.
    at::Tensor running_lp = topk_lp + hits.to(at::kFloat) * -1.0e9;
    at::Tensor next_idx = std::get<1>(at::topk(running_lp, nb));
    running_seqs_ = gather_beams(topk_seqs, next_idx);
    running_scores_ = gather_beams(running_lp, next_idx);
    running_beam_idx_ = gather_beams(topk_beam_idx, next_idx);

    // Finished hypotheses: only the top num_beams continuations may finish.
    at::Tensor just_finished = hits & top_nb_mask_.unsqueeze(0);
    at::Tensor fin_lp = topk_lp / std::pow(static_cast<double>(cur_len_ + 1 - kPromptLength), length_penalty_);
    at::Tensor full = finished_.all(-1, true);
    if (early_) fin_lp = fin_lp + full.to(at::kFloat) * -1.0e9;
    fin_lp = fin_lp + (~heuristic_open_).to(at::kFloat) * -1.0e9;
    fin_lp = fin_lp + (~just_finished).to(at::kFloat) * -1.0e9;
    at::Tensor merged_seqs = at::cat({seqs_, topk_seqs}, 1);
    at::Tensor merged_scores = at::cat({beam_scores_, fin_lp}, 1);
    at::Tensor merged_fin = at::cat({finished_, just_finished}, 1);
    at::Tensor merged_lengths = at::cat({lengths_, at::full_like(topk_ids, cur_len_ + 1)}, 1);
    at::Tensor best = std::get<1>(at::topk(merged_scores, nb));
    seqs_ = gather_beams(merged_seqs, best);
    lengths_ = gather_beams(merged_lengths, best);
    beam_scores_ = gather_beams(merged_scores, best);
    finished_ = gather_beams(merged_fin, best);

    // The cache follows the surviving beams.
    at::Tensor reorder = running_beam_idx_.select(2, cur_len_ - kPromptLength).reshape({B * nb});
    cur_len_ += 1;

    // HF's early-stop heuristic (early_stopping=False uses the current length).
    const double best_len = static_cast<double>(cur_len_ - kPromptLength);
    at::Tensor best_running = running_scores_.narrow(1, 0, 1) / std::pow(best_len, length_penalty_);
    at::Tensor worst_finished =
        at::where(finished_, std::get<0>(beam_scores_.min(1, true)), at::scalar_tensor(-1.0e9, running_scores_.options()));
    heuristic_open_ = heuristic_open_ & (best_running > worst_finished).any(-1, true);
    const bool improvement_possible = heuristic_open_.any().item<bool>();
    const bool open_beam = !(early_ && finished_.all().item<bool>());
    const bool can_continue = !hits.all().item<bool>();
    done_ = !(improvement_possible && open_beam && can_continue);
    return reorder;
}

// transformers fills a row shorter than the input's longest with `pad_token_id or eos_token_id[0]`,
// which is </s> where the pad id is 0 (T5's): a row a stop string ended early then reads as ending
// with </s>. The same here, so that ids equal transformers' (the text is the same either way).
void PlainBeamSearch::fill_like_transformers(std::vector<DecodedSequence>& rows) const {
    if (pad_ != 0) return;
    size_t longest = 0;
    for (const auto& d : rows) longest = std::max(longest, d.ids.size());
    for (auto& d : rows)
        if (d.ids.size() < longest && (d.ids.empty() || d.ids.back() != eos_)) d.ids.push_back(static_cast<int>(eos_));
}

std::vector<std::vector<DecodedSequence>> PlainBeamSearch::results(int num_return_sequences) const {
    const int64_t n_ret = num_return_sequences;
    at::Tensor out_seqs = seqs_.narrow(1, 0, n_ret).cpu();
    at::Tensor out_scores = beam_scores_.narrow(1, 0, n_ret).cpu();
    at::Tensor out_lengths = lengths_.narrow(1, 0, n_ret).to(at::kCPU).contiguous();
    std::vector<std::vector<DecodedSequence>> result(B_);
    for (int64_t b = 0; b < B_; ++b) {
        for (int64_t k = 0; k < n_ret; ++k) {
            DecodedSequence d;
            at::Tensor row = out_seqs[b][k];
            const int64_t* p = row.data_ptr<int64_t>();
            const int64_t length = std::min(cur_len_, out_lengths.data_ptr<int64_t>()[b * n_ret + k]);
            for (int64_t t = kPromptLength; t < length; ++t) {
                d.ids.push_back(static_cast<int>(p[t]));
                if (p[t] == eos_) break;
            }
            d.score = out_scores[b][k].item<float>();
            result[b].push_back(std::move(d));
        }
        fill_like_transformers(result[b]);
    }
    return result;
}

}  // namespace t5s
