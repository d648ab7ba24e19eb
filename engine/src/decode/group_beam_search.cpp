#include "decode/group_beam_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "decode/logits_processors.h"
#include "decode/token_processors.h"
#include "torch/vocab_kernels.h"

namespace t5s {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

}  // namespace

void apply_hamming_diversity(at::Tensor& scores, const at::Tensor& previous, float penalty) {
    if (previous.size(1) == 0 || penalty == 0.0f) return;
    const int64_t inputs = previous.size(0), V = scores.size(1);
    at::Tensor counts = at::zeros({inputs, V}, scores.options());
    const at::Tensor tokens = previous.to(scores.device(), at::kLong);
    counts.scatter_add_(1, tokens, at::ones(tokens.sizes(), scores.options()));
    // transformers: diversity_penalty * bincount(tokens) is a float32 product, then subtracted.
    counts.mul_(penalty);
    scores.view({inputs, -1, V}).sub_(counts.unsqueeze(1));
}

void GroupBeamSearch::Hypotheses::add(std::vector<int> ids, double sum_logprobs, int64_t generated, double length_penalty,
                                      size_t size) {
    const double score = sum_logprobs / std::pow(static_cast<double>(generated), length_penalty);
    if (beams.size() >= size && !(score > worst)) return;
    beams.push_back({score, std::move(ids)});
    if (beams.size() <= size) {
        worst = std::min(score, worst);
        return;
    }
    // transformers sorts (score, index) pairs: the lowest leaves, the next lowest is the new worst.
    std::vector<size_t> order(beams.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return beams[a].score < beams[b].score || (beams[a].score == beams[b].score && a < b); });
    worst = beams[order[1]].score;
    beams.erase(beams.begin() + static_cast<std::ptrdiff_t>(order[0]));
}

bool GroupBeamSearch::Hypotheses::is_done(double best_sum_logprobs, int64_t generated, double length_penalty, bool early_stopping,
                                          size_t size) const {
    if (beams.size() < size) return false;
    if (early_stopping) return true;
    // transformers' heuristic for early_stopping=False: the best running sum at the current length.
    return worst >= best_sum_logprobs / std::pow(static_cast<double>(generated), length_penalty);
}

GroupBeamSearch::GroupBeamSearch(int64_t inputs, const GenerationOptions& o, const ModelConfig& cfg, at::Device dev,
                                 KernelIsa vocab)
    : BeamSearch(inputs, o, cfg, dev, vocab), G_(o.num_beam_groups), gs_(o.num_beams / o.num_beam_groups) {
    sequences_ = at::full({B_ * nb_, max_length_}, cfg.pad_token_id, at::TensorOptions().dtype(at::kLong).device(dev));
    sequences_.select(1, 0).fill_(cfg.decoder_start_token_id);
    // Each group starts from its first beam: the others' -1e9 keeps them out of the first top-k.
    beam_scores_.assign(static_cast<size_t>(B_ * nb_), -1e9f);
    for (int64_t r = 0; r < B_ * nb_; r += gs_) beam_scores_[static_cast<size_t>(r)] = 0.0f;
    for (int64_t g = 0; g < G_; ++g) {
        std::vector<int64_t> rows;
        for (int64_t b = 0; b < B_; ++b)
            for (int64_t j = 0; j < gs_; ++j) rows.push_back(b * nb_ + g * gs_ + j);
        group_rows_.push_back(long_tensor(rows, dev));
    }
    finished_.resize(static_cast<size_t>(B_ * G_));
    group_done_.assign(static_cast<size_t>(B_ * G_), 0);
}

at::Tensor GroupBeamSearch::last_tokens() const { return sequences_.select(1, cur_len_ - 1); }

at::Tensor GroupBeamSearch::step(at::Tensor logits, const GenerationOptions& o) {
    at::Tensor log_probs = logits;  // this step's own tensor: normalised in place where possible
    if (!log_softmax_inplace_cpu(log_probs, vocab_)) log_probs = at::log_softmax(logits, -1);
    const at::Tensor sequences = sequences_.narrow(1, 0, cur_len_);
    const size_t rows = static_cast<size_t>(B_ * nb_);
    Choice choice{std::vector<int64_t>(rows, 0), std::vector<int64_t>(rows), std::vector<float>(rows, 0.0f)};
    std::iota(choice.sources.begin(), choice.sources.end(), int64_t{0});
    for (int64_t g = 0; g < G_; ++g) step_group(g, log_probs, sequences, o, &choice);

    const at::Tensor order = long_tensor(choice.sources, device_);
    sequences_ = sequences_.index_select(0, order);
    sequences_.select(1, cur_len_).copy_(long_tensor(choice.tokens, device_));
    beam_scores_ = std::move(choice.scores);
    cur_len_ += 1;
    done_ = cur_len_ >= max_length_ || std::all_of(group_done_.begin(), group_done_.end(), [](char d) { return d != 0; }) ||
            stop_.time_up() || every_row_stops();
    return order;
}

// transformers' group beam search stops when the stopping criteria hold for every row (the rows of
// finished groups too, which it feeds pads): a row ends with </s> or with a stop string.
bool GroupBeamSearch::every_row_stops() const {
    if (!stop_.strings) return false;
    const at::Tensor host = sequences_.narrow(1, 0, cur_len_).to(at::kCPU).contiguous();
    const std::vector<char> ends = stop_.rows_ending(host.data_ptr<int64_t>(), host.size(0), cur_len_);
    for (int64_t r = 0; r < host.size(0); ++r) {
        if (!ends[static_cast<size_t>(r)] && host.data_ptr<int64_t>()[r * cur_len_ + cur_len_ - 1] != eos_) return false;
    }
    return true;
}

// One group of every input: its scores penalised by the tokens the earlier groups took at this
// step, processed, and its top 2 x group_size continuations chosen from.
void GroupBeamSearch::step_group(int64_t g, const at::Tensor& log_probs, const at::Tensor& sequences, const GenerationOptions& o,
                                 Choice* choice) {
    const at::Tensor& rows = group_rows_[static_cast<size_t>(g)];
    at::Tensor scores = log_probs.index_select(0, rows);
    const at::Tensor seqs = sequences.index_select(0, rows);
    apply_sequence_bias(scores, seqs, o.sequence_bias);  // before the diversity penalty, as transformers orders them
    if (g > 0 && o.diversity_penalty > 0.0f) {
        std::vector<int64_t> previous;  // [inputs, g * group_size]
        for (int64_t b = 0; b < B_; ++b) {
            const auto first = choice->tokens.begin() + b * nb_;
            previous.insert(previous.end(), first, first + g * gs_);
        }
        apply_hamming_diversity(scores, long_tensor(previous, device_).view({B_, g * gs_}), o.diversity_penalty);
    }
    process_rows(scores, seqs, o, gs_, /*sequence_bias_done=*/true);
    std::vector<float> running;
    for (int64_t b = 0; b < B_; ++b) {
        const auto first = beam_scores_.begin() + b * nb_ + g * gs_;
        running.insert(running.end(), first, first + gs_);
    }
    scores.add_(at::tensor(running).to(scores.device()).unsqueeze(1));
    auto [top_scores, top_ids] = topk_distinct_fast(scores.view({B_, gs_ * V_}), 2 * gs_);
    choose(g, top_scores.to(at::kCPU).contiguous(), top_ids.to(at::kCPU).contiguous(), seqs, choice);
}

// transformers' BeamSearchScorer.process for one group: in rank order, </s> among the top
// group_size ends a hypothesis, any other token continues a beam until group_size beams run.
void GroupBeamSearch::choose(int64_t g, const at::Tensor& top_scores, const at::Tensor& top_ids, const at::Tensor& seqs,
                             Choice* c) {
    const int64_t k = 2 * gs_;
    const float* score = top_scores.data_ptr<float>();
    const int64_t* id = top_ids.data_ptr<int64_t>();
    at::Tensor host;  // the group's sequences, copied when a hypothesis ends
    for (int64_t b = 0; b < B_; ++b) {
        const size_t bg = static_cast<size_t>(b * G_ + g);
        const int64_t first = b * nb_ + g * gs_;
        if (group_done_[bg]) {  // transformers feeds </s>-padded rows on; their tokens count as picks
            for (int64_t j = 0; j < gs_; ++j) c->tokens[static_cast<size_t>(first + j)] = pad_;
            continue;
        }
        int64_t running = 0;
        for (int64_t rank = 0; rank < k && running < gs_; ++rank) {
            const int64_t token = id[b * k + rank] % V_, beam = id[b * k + rank] / V_;
            if (token == eos_) {
                if (rank >= gs_) continue;
                if (!host.defined()) host = seqs.to(at::kCPU).contiguous();
                finished_[bg].add(row_ids(host, b * gs_ + beam, true), score[b * k + rank], cur_len_, length_penalty_,
                                  static_cast<size_t>(gs_));
            } else {
                const size_t row = static_cast<size_t>(first + running++);
                c->tokens[row] = token;
                c->sources[row] = first + beam;
                c->scores[row] = score[b * k + rank];
            }
        }
        if (finished_[bg].is_done(score[b * k], cur_len_, length_penalty_, early_, static_cast<size_t>(gs_))) group_done_[bg] = 1;
    }
}

std::vector<int> GroupBeamSearch::row_ids(const at::Tensor& host_sequences, int64_t row, bool ended) const {
    const int64_t* p = host_sequences.data_ptr<int64_t>() + row * host_sequences.size(1);
    std::vector<int> ids(p + 1, p + cur_len_);
    if (ended) ids.push_back(static_cast<int>(eos_));
    return ids;
}

// transformers' finalize: the running beams of groups not done join their lists; per input, the
// hypotheses of all its groups ranked by score (a stable sort, the last of equals first).
std::vector<std::vector<DecodedSequence>> GroupBeamSearch::results(int num_return_sequences) const {
    std::vector<Hypotheses> finished = finished_;
    const at::Tensor host = sequences_.narrow(1, 0, cur_len_).to(at::kCPU).contiguous();
    for (int64_t bg = 0; bg < B_ * G_; ++bg) {
        if (group_done_[static_cast<size_t>(bg)]) continue;
        const int64_t first = (bg / G_) * nb_ + (bg % G_) * gs_;
        for (int64_t row = first; row < first + gs_; ++row)
            finished[static_cast<size_t>(bg)].add(row_ids(host, row, false), beam_scores_[static_cast<size_t>(row)], cur_len_ - 1,
                                                  length_penalty_, static_cast<size_t>(gs_));
    }
    std::vector<std::vector<DecodedSequence>> out(static_cast<size_t>(B_));
    for (int64_t b = 0; b < B_; ++b) {
        std::vector<const Hypotheses::Entry*> all;
        for (int64_t g = 0; g < G_; ++g)
            for (const auto& e : finished[static_cast<size_t>(b * G_ + g)].beams) all.push_back(&e);
        std::stable_sort(all.begin(), all.end(), [](const auto* x, const auto* y) { return x->score < y->score; });
        const size_t n = std::min(all.size(), static_cast<size_t>(num_return_sequences));
        for (size_t k = 0; k < n; ++k) {
            const Hypotheses::Entry& e = *all[all.size() - 1 - k];
            std::vector<int> ids = e.ids;
            // transformers' finalize writes </s> after a hypothesis shorter than the length limit
            // (one that max_time or a stop string ended while running).
            if ((ids.empty() || ids.back() != eos_) && static_cast<int64_t>(ids.size()) + 1 < max_length_)
                ids.push_back(static_cast<int>(eos_));
            out[static_cast<size_t>(b)].push_back(
                {std::move(ids), static_cast<double>(static_cast<float>(e.score))});  // float32, as transformers returns it
        }
    }
    return out;
}

}  // namespace t5s
