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

// The rows of a greedy / sampling decode: the running ones (their sequences, start token included,
// as the processors see them in HF), where each came from, and the finished results.
struct GreedyRows {
    at::Tensor sequences;      // [running, 1 + steps]
    at::Tensor active_rows;    // original row of each running row (device)
    at::Tensor scores_sum;     // summed log-probabilities, per original row
    std::vector<int64_t> row_of;  // original row of each running row (host; the sentinel guard needs it)
    std::vector<std::vector<int>> out_ids;
    std::vector<double> out_scores;

    GreedyRows(int64_t rows, int64_t start_token, const at::Tensor& like) {
        const auto long_opts = at::TensorOptions().dtype(at::kLong).device(like.device());
        sequences = at::full({rows, 1}, start_token, long_opts);
        active_rows = at::arange(rows, long_opts);
        scores_sum = at::zeros({rows}, like.options().dtype(at::kDouble));
        row_of.resize(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) row_of[static_cast<size_t>(r)] = r;
        out_ids.resize(static_cast<size_t>(rows));
        out_scores.assign(static_cast<size_t>(rows), 0.0);
    }

    // Copies the rows marked in `finished` into the results.
    void collect(const at::Tensor& finished) {
        const at::Tensor fin_idx = finished.nonzero().squeeze(1);
        const at::Tensor fin_rows = active_rows.index_select(0, fin_idx).cpu();
        const at::Tensor fin_seqs = sequences.index_select(0, fin_idx).cpu();
        const at::Tensor fin_scores = scores_sum.index_select(0, fin_rows.to(scores_sum.device())).cpu();
        for (int64_t i = 0; i < fin_rows.size(0); ++i) {
            const int64_t r = fin_rows[i].item<int64_t>();
            const auto row = fin_seqs[i];
            out_ids[r].assign(row.data_ptr<int64_t>() + 1, row.data_ptr<int64_t>() + row.size(0));
            out_scores[r] = fin_scores[i].item<double>();
        }
    }

    // Keeps the running rows `keep` (indices into the running rows), in the decoder state too.
    void keep_running(const at::Tensor& keep, DecoderState& state, bool track_inputs) {
        sequences = sequences.index_select(0, keep);
        active_rows = active_rows.index_select(0, keep);
        if (track_inputs) {
            const at::Tensor kept_host = keep.to(at::kCPU).contiguous();
            const int64_t* kept = kept_host.data_ptr<int64_t>();
            std::vector<int64_t> next_rows;
            for (int64_t i = 0; i < kept_host.size(0); ++i) next_rows.push_back(row_of[static_cast<size_t>(kept[i])]);
            row_of = std::move(next_rows);
        }
        T5Network::select_rows(state, keep);
    }
};

// One step's next token and its log-probability for every running row: the logits processors,
// the sentinel guard, then sampling or greedy choice.
void pick_next_tokens(at::Tensor& logits, const GreedyRows& rows, const GenerationOptions& o, int64_t eos,
                      int64_t n_ret, const spans::SentinelGuard* guard, at::Generator* generator, KernelIsa vocab,
                      at::Tensor& next, at::Tensor& next_logprob) {
    process_logits(logits, rows.sequences, o, eos, /*include_warpers=*/false);
    if (guard && !guard->range.empty()) {
        std::vector<const std::vector<int>*> required;
        for (int64_t r : rows.row_of) required.push_back(&guard->required[static_cast<size_t>(r / n_ret)]);
        apply_sentinel_guard(logits, rows.sequences, required, guard->range, o.max_new_tokens, eos);
    }
    if (o.do_sample) {
        next = sample_tokens(logits, o, *generator, &next_logprob);
    } else if (!greedy_pick_cpu(logits, next, next_logprob, vocab)) {
        // max(dim) returns argmax's index (first maximum; NaN wins) and is several times faster
        // than argmax's CPU reduction over the vocabulary.
        next = std::get<1>(logits.max(-1));
        next_logprob = at::log_softmax(logits, -1).gather(1, next.unsqueeze(1)).squeeze(1);
    }
}

}  // namespace

std::vector<std::vector<DecodedSequence>> decode_greedy_or_sample(const T5Network& net, const at::Tensor& encoder_hidden_in,
                                                                  const at::Tensor& attention_mask_in,
                                                                  const GenerationOptions& options_in,
                                                                  GenerationControl* control, at::Generator* generator,
                                                                  const spans::SentinelGuard* guard) {
    GenerationOptions o = options_in;
    uint64_t version = initial_version(control);
    const int64_t inputs = encoder_hidden_in.size(0);
    const int64_t n_ret = o.do_sample ? o.num_return_sequences : 1;
    const int64_t eos = net.config().eos_token_id;
    const bool guarded = guard && !guard->range.empty();
    // Candidates share their input's encoder output: never re-encoded, and its cross-attention
    // K/V are projected once per input, then repeated for the candidates.
    DecoderState state = net.start_decoding(encoder_hidden_in, attention_mask_in, o.max_new_tokens + 1, n_ret);
    GreedyRows rows(inputs * n_ret, net.config().decoder_start_token_id, encoder_hidden_in);
    for (int step = 0; step < o.max_new_tokens; ++step) {
        check_cancel(control);
        refresh_live_settings(control, &version, &o);
        at::Tensor logits = net.decode_step(state, rows.sequences.select(1, rows.sequences.size(1) - 1));
        at::Tensor next, next_logprob;
        pick_next_tokens(logits, rows, o, eos, n_ret, guard, generator, net.kernels().vocab, next, next_logprob);
        rows.scores_sum.index_add_(0, rows.active_rows, next_logprob.to(at::kDouble));
        rows.sequences = at::cat({rows.sequences, next.unsqueeze(1)}, 1);
        const at::Tensor done = next == eos;
        const bool last = step + 1 == o.max_new_tokens;
        const int64_t running = rows.sequences.size(0);
        const int64_t n_done = last ? running : done.sum().item<int64_t>();
        report_step(control, step + 1, static_cast<int>(running), running);
        if (n_done == 0) continue;
        // Move finished rows out; the remaining ones keep decoding on a smaller batch.
        const at::Tensor finished = last ? at::ones_like(done) : done;
        rows.collect(finished);
        if (last || n_done == running) break;
        rows.keep_running((~finished).nonzero().squeeze(1), state, guarded);
    }
    std::vector<std::vector<DecodedSequence>> result(inputs);
    for (int64_t r = 0; r < inputs * n_ret; ++r) result[r / n_ret].push_back({rows.out_ids[r], rows.out_scores[r]});
    return result;
}

std::vector<std::vector<DecodedSequence>> decode_beam_search(const T5Network& net, const at::Tensor& encoder_hidden,
                                                             const at::Tensor& attention_mask, const GenerationOptions& options_in,
                                                             GenerationControl* control, const spans::SentinelGuard* guard) {
    GenerationOptions o = options_in;
    uint64_t version = initial_version(control);
    const int64_t B = encoder_hidden.size(0), nb = o.num_beams;
    DecoderState state = net.start_decoding(encoder_hidden, attention_mask, o.max_new_tokens + 1, nb);
    BeamSearch search(B, o, net.config(), encoder_hidden.device(), net.kernels().vocab);
    if (guard) search.set_sentinel_guard(*guard);
    while (true) {
        check_cancel(control);
        refresh_live_settings(control, &version, &o);
        at::Tensor logits = net.decode_step(state, search.last_tokens());
        T5Network::reorder_beams(state, search.step(logits, o));
        report_step(control, search.steps(), static_cast<int>(B * nb), B * nb);
        if (search.done()) break;
    }
    return search.results(o.num_return_sequences);
}

}  // namespace t5s
