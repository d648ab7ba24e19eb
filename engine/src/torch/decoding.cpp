#include "torch/decoding.h"

#include "t5s/error.h"
#include "torch/logits_processors.h"
#include "torch/vocab_kernels.h"

namespace t5s {
namespace {

// Re-reads hot-swappable settings at a step boundary. Only per-step knobs change mid-request;
// shape-changing ones (beams, candidates, max length) apply from the next request.
void refresh_live_settings(GenerationControl* control, uint64_t* seen_version, GenerationOptions* o) {
    if (!control || !control->live_settings) return;
    const uint64_t v = control->live_settings->version();
    if (v == *seen_version) return;
    *seen_version = v;
    *o = merge_step_settings(*o, control->live_settings->get());
}

void check_cancel(GenerationControl* control) {
    if (control && control->cancel.load()) throw Error(ErrorCode::Cancelled, "generation cancelled");
}

void report_step(GenerationControl* control, int step, int active, int64_t tokens) {
    if (control && control->on_step) control->on_step(StepInfo{step, active, tokens});
}

uint64_t initial_version(GenerationControl* control) {
    return control && control->live_settings ? control->live_settings->version() : 0;
}

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

std::vector<std::vector<DecodedSequence>> decode_greedy_or_sample(const T5Network& net, const at::Tensor& encoder_hidden_in,
                                                                  const at::Tensor& attention_mask_in,
                                                                  const GenerationOptions& options_in,
                                                                  GenerationControl* control, at::Generator* generator) {
    GenerationOptions o = options_in;
    uint64_t version = initial_version(control);
    const int64_t inputs = encoder_hidden_in.size(0);
    const int64_t n_ret = o.do_sample ? o.num_return_sequences : 1;
    // Candidates share their input's encoder output: never re-encoded, and its cross-attention
    // K/V are projected once per input, then repeated for the candidates.
    const int64_t rows = inputs * n_ret;
    const auto& cfg = net.config();
    const int64_t capacity = o.max_new_tokens + 1;

    DecoderState state = net.start_decoding(encoder_hidden_in, attention_mask_in, capacity, n_ret);
    auto long_opts = at::TensorOptions().dtype(at::kLong).device(encoder_hidden_in.device());
    // Sequences of the rows still running, start token included (the processors see it, as in HF).
    at::Tensor sequences = at::full({rows, 1}, cfg.decoder_start_token_id, long_opts);
    at::Tensor active_rows = at::arange(rows, long_opts);  // original row of each running row
    at::Tensor scores_sum = at::zeros({rows}, encoder_hidden_in.options().dtype(at::kDouble));

    std::vector<std::vector<int>> out_ids(rows);
    std::vector<double> out_scores(rows, 0.0);
    for (int step = 0; step < o.max_new_tokens; ++step) {
        check_cancel(control);
        refresh_live_settings(control, &version, &o);
        at::Tensor logits = net.decode_step(state, sequences.select(1, sequences.size(1) - 1));
        at::Tensor next, next_logprob;
        process_logits(logits, sequences, o, cfg.eos_token_id, /*include_warpers=*/false);
        if (o.do_sample) {
            next = sample_tokens(logits, o, *generator, &next_logprob);
        } else if (!greedy_pick_cpu(logits, next, next_logprob)) {
            // max(dim) returns argmax's index (first maximum; NaN wins) and is several times faster
            // than argmax's CPU reduction over the vocabulary.
            next = std::get<1>(logits.max(-1));
            next_logprob = at::log_softmax(logits, -1).gather(1, next.unsqueeze(1)).squeeze(1);
        }
        scores_sum.index_add_(0, active_rows, next_logprob.to(at::kDouble));
        sequences = at::cat({sequences, next.unsqueeze(1)}, 1);
        at::Tensor done = next == cfg.eos_token_id;
        const bool last = step + 1 == o.max_new_tokens;
        const int64_t n_done = last ? sequences.size(0) : done.sum().item<int64_t>();
        report_step(control, step + 1, static_cast<int>(sequences.size(0)), sequences.size(0));
        if (n_done == 0) continue;
        // Move finished rows out; the remaining ones keep decoding on a smaller batch.
        at::Tensor finished = last ? at::ones_like(done) : done;
        at::Tensor fin_idx = finished.nonzero().squeeze(1);
        at::Tensor fin_rows = active_rows.index_select(0, fin_idx).cpu();
        at::Tensor fin_seqs = sequences.index_select(0, fin_idx).cpu();
        at::Tensor fin_scores = scores_sum.index_select(0, fin_rows.to(scores_sum.device())).cpu();
        for (int64_t i = 0; i < fin_rows.size(0); ++i) {
            const int64_t r = fin_rows[i].item<int64_t>();
            auto row = fin_seqs[i];
            out_ids[r].assign(row.data_ptr<int64_t>() + 1, row.data_ptr<int64_t>() + row.size(0));
            out_scores[r] = fin_scores[i].item<double>();
        }
        if (last || n_done == sequences.size(0)) break;
        at::Tensor keep = (~finished).nonzero().squeeze(1);
        sequences = sequences.index_select(0, keep);
        active_rows = active_rows.index_select(0, keep);
        T5Network::select_rows(state, keep);
    }
    std::vector<std::vector<DecodedSequence>> result(inputs);
    for (int64_t r = 0; r < rows; ++r) result[r / n_ret].push_back({out_ids[r], out_scores[r]});
    return result;
}

std::vector<std::vector<DecodedSequence>> decode_beam_search(const T5Network& net, const at::Tensor& encoder_hidden,
                                                             const at::Tensor& attention_mask, const GenerationOptions& options_in,
                                                             GenerationControl* control) {
    GenerationOptions o = options_in;
    uint64_t version = initial_version(control);
    const auto& cfg = net.config();
    const int64_t B = encoder_hidden.size(0), nb = o.num_beams, V = cfg.vocab_size;
    const int64_t prompt_len = 1, max_length = o.max_new_tokens + 1;
    const int64_t keep = 2 * nb;  // one EOS token: beams_to_keep = max(2, 1 + n_eos) * num_beams
    const double lp = o.length_penalty;
    const bool early = o.early_stopping;
    auto dev = encoder_hidden.device();
    auto f32 = at::TensorOptions().dtype(at::kFloat).device(dev);
    auto i64 = at::TensorOptions().dtype(at::kLong).device(dev);

    DecoderState state = net.start_decoding(encoder_hidden, attention_mask, max_length, nb);

    at::Tensor running_seqs = at::full({B, nb, max_length}, cfg.pad_token_id, i64);
    running_seqs.select(2, 0).fill_(cfg.decoder_start_token_id);
    at::Tensor seqs = running_seqs.clone();
    at::Tensor running_scores = at::zeros({B, nb}, f32);
    running_scores.narrow(1, 1, nb - 1).fill_(-1e9);
    at::Tensor beam_scores = at::full({B, nb}, -1e9, f32);
    at::Tensor finished = at::zeros({B, nb}, f32.dtype(at::kBool));
    at::Tensor heuristic_open = at::ones({B, 1}, f32.dtype(at::kBool));
    at::Tensor running_beam_idx = at::full({B, nb, max_length - prompt_len}, -1, i64);
    at::Tensor top_nb_mask = at::cat({at::ones({nb}, f32.dtype(at::kBool)), at::zeros({keep - nb}, f32.dtype(at::kBool))});
    at::Tensor batch_offset = at::arange(B, i64).view({-1, 1}) * nb;

    int64_t cur_len = prompt_len;
    while (true) {
        check_cancel(control);
        refresh_live_settings(control, &version, &o);
        at::Tensor flat_seqs = running_seqs.narrow(2, 0, cur_len).reshape({B * nb, cur_len});
        at::Tensor logits = net.decode_step(state, flat_seqs.select(1, cur_len - 1));
        at::Tensor log_probs = logits;  // this step's own tensor: normalised in place where possible
        if (!log_softmax_inplace_cpu(log_probs)) log_probs = at::log_softmax(logits, -1);
        process_logits(log_probs, flat_seqs, o, cfg.eos_token_id, false);
        // In place: log_probs is this step's own tensor (saves a [B*beams, vocab] write per step).
        log_probs.view({B, nb, V}).add_(running_scores.unsqueeze(2));
        log_probs = log_probs.view({B, nb * V});

        // Top-k continuations over all beams.
        auto [topk_lp, topk_idx] = topk_distinct_fast(log_probs, keep);
        at::Tensor topk_beam = at::div(topk_idx, V, "floor");
        at::Tensor topk_ids = topk_idx.remainder(V);
        at::Tensor topk_seqs = gather_beams(running_seqs, topk_beam);
        at::Tensor topk_beam_idx = gather_beams(running_beam_idx, topk_beam);
        topk_seqs.select(2, cur_len).copy_(topk_ids);
        topk_beam_idx.select(2, cur_len - prompt_len).copy_(topk_beam + batch_offset);

        // Stopping criteria: EOS, or the maximum length reached.
        at::Tensor hits = (topk_ids == cfg.eos_token_id);
        if (cur_len + 1 >= max_length) hits.fill_(true);

        // Running beams for the next step: best non-finished continuations.
        at::Tensor running_lp = topk_lp + hits.to(at::kFloat) * -1.0e9;
        at::Tensor next_idx = std::get<1>(at::topk(running_lp, nb));
        running_seqs = gather_beams(topk_seqs, next_idx);
        running_scores = gather_beams(running_lp, next_idx);
        running_beam_idx = gather_beams(topk_beam_idx, next_idx);

        // Finished hypotheses: only the top num_beams continuations may finish.
        at::Tensor just_finished = hits & top_nb_mask.unsqueeze(0);
        at::Tensor fin_lp = topk_lp / std::pow(static_cast<double>(cur_len + 1 - prompt_len), lp);
        at::Tensor full = finished.all(-1, true);
        if (early) fin_lp = fin_lp + full.to(at::kFloat) * -1.0e9;
        fin_lp = fin_lp + (~heuristic_open).to(at::kFloat) * -1.0e9;
        fin_lp = fin_lp + (~just_finished).to(at::kFloat) * -1.0e9;
        at::Tensor merged_seqs = at::cat({seqs, topk_seqs}, 1);
        at::Tensor merged_scores = at::cat({beam_scores, fin_lp}, 1);
        at::Tensor merged_fin = at::cat({finished, just_finished}, 1);
        at::Tensor best = std::get<1>(at::topk(merged_scores, nb));
        seqs = gather_beams(merged_seqs, best);
        beam_scores = gather_beams(merged_scores, best);
        finished = gather_beams(merged_fin, best);

        // Reorder the cache to follow the surviving beams.
        T5Network::reorder_beams(state, running_beam_idx.select(2, cur_len - prompt_len).reshape({B * nb}));
        cur_len += 1;
        report_step(control, static_cast<int>(cur_len - prompt_len), static_cast<int>(B * nb), B * nb);

        // HF's early-stop heuristic (early_stopping=False uses the current length).
        const double best_len = static_cast<double>(cur_len - prompt_len);
        at::Tensor best_running = running_scores.narrow(1, 0, 1) / std::pow(best_len, lp);
        at::Tensor worst_finished = at::where(finished, std::get<0>(beam_scores.min(1, true)), at::scalar_tensor(-1.0e9, f32));
        heuristic_open = heuristic_open & (best_running > worst_finished).any(-1, true);
        const bool improvement_possible = heuristic_open.any().item<bool>();
        const bool open_beam = !(early && finished.all().item<bool>());
        const bool can_continue = !hits.all().item<bool>();
        if (!(improvement_possible && open_beam && can_continue)) break;
    }

    const int64_t n_ret = o.num_return_sequences;
    at::Tensor out_seqs = seqs.narrow(1, 0, n_ret).cpu();
    at::Tensor out_scores = beam_scores.narrow(1, 0, n_ret).cpu();
    std::vector<std::vector<DecodedSequence>> result(B);
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < n_ret; ++k) {
            DecodedSequence d;
            at::Tensor row = out_seqs[b][k];
            const int64_t* p = row.data_ptr<int64_t>();
            for (int64_t t = prompt_len; t < cur_len; ++t) {
                d.ids.push_back(static_cast<int>(p[t]));
                if (p[t] == cfg.eos_token_id) break;
            }
            d.score = out_scores[b][k].item<float>();
            result[b].push_back(std::move(d));
        }
    }
    return result;
}

}  // namespace t5s
