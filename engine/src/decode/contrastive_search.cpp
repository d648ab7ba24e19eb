#include "decode/contrastive_search.h"

#include <cstdio>
#include <cstdlib>

namespace t5s {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

std::vector<int64_t> host_longs(const at::Tensor& t) {
    const at::Tensor c = t.to(at::kCPU, at::kLong).contiguous();
    return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// The double a penalty_alpha names: the shortest decimal that reads back as the same float. The
// field is a float, but transformers computes 1 - alpha from the Python float the user wrote
// (0.6, not 0.6000000238...), and the two differ in the last bit of the float the kernel uses.
double decimal_of(float f) {
    char text[32];
    for (int digits = 1; digits <= 9; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(f));
        if (std::strtof(text, nullptr) == f) return std::strtod(text, nullptr);
    }
    return f;
}

// Each vector along the last dimension divided by its length, as _ranking_fast normalises.
at::Tensor unit(const at::Tensor& x) { return x / at::linalg_vector_norm(x, 2, {x.dim() - 1}, /*keepdim=*/true); }

}  // namespace

ContrastiveSearch::ContrastiveSearch(int64_t inputs, int64_t top_k, int64_t start_token, int64_t eos, int max_new_tokens,
                                     at::Device device)
    : k_(top_k), eos_(eos), max_new_tokens_(max_new_tokens), device_(device) {
    for (int64_t i = 0; i < inputs; ++i) alive_.push_back(i);
    scores_.assign(static_cast<size_t>(inputs), 0.0);
    const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
    sequences_ = at::full({inputs, 1}, start_token, longs);
    tokens_ = at::full({inputs * k_}, start_token, longs);  // the start token's state, computed k times, row 0's kept
}

// The candidate each input takes: transformers' _ranking_fast on the same tensors (the context
// repeated per candidate and normalised there, one batched product), so that near ties break as
// they break there. T5's decoder has no padding among the tokens generated, so its cosine mask
// masks nothing.
at::Tensor ContrastiveSearch::select(const at::Tensor& hidden, float penalty_alpha) const {
    const at::Tensor next = unit(hidden.unsqueeze(1));                                // [rows, 1, d]
    const at::Tensor context = unit(context_.repeat_interleave(k_, 0));               // [rows, T, d]
    const at::Tensor cosine = at::matmul(context, next.transpose(1, 2)).squeeze(-1);  // [rows, T]
    const at::Tensor penalty = std::get<0>(cosine.max(-1));
    const double alpha = decimal_of(penalty_alpha);
    const at::Tensor score = (1.0 - alpha) * probs_.reshape(-1) - alpha * penalty;
    return std::get<1>(score.view({-1, k_}).max(-1));
}

ContrastiveSearch::StepResult ContrastiveSearch::step(const at::Tensor& logits, const at::Tensor& hidden, float penalty_alpha,
                                                      const Process& process) {
    const int64_t n = static_cast<int64_t>(alive_.size());
    const at::Tensor chosen =
        started_ ? select(hidden, penalty_alpha) : at::zeros({n}, at::TensorOptions().dtype(at::kLong).device(device_));
    std::vector<int64_t> rows = host_longs(chosen);  // the row of each input whose token is taken
    for (int64_t a = 0; a < n; ++a) rows[static_cast<size_t>(a)] += a * k_;
    const at::Tensor row_index = long_tensor(rows, logits.device());
    const at::Tensor taken_hidden = hidden.index_select(0, row_index).unsqueeze(1);
    if (started_) {
        const at::Tensor index = chosen.unsqueeze(1);
        const at::Tensor logprob = logprobs_.gather(1, index).to(at::kCPU, at::kDouble).contiguous();
        for (int64_t a = 0; a < n; ++a) scores_[static_cast<size_t>(a)] += logprob.data_ptr<double>()[a];
        sequences_ = at::cat({sequences_, tokens_.view({n, k_}).gather(1, index)}, 1);
        context_ = at::cat({context_, taken_hidden}, 1);
    } else {
        context_ = taken_hidden;
        started_ = true;
    }
    StepResult out;
    std::vector<int64_t> kept;
    out.finished = take_finished(&kept);
    if (kept.empty()) return out;
    std::vector<int64_t> taken_rows;
    for (int64_t a : kept) taken_rows.push_back(rows[static_cast<size_t>(a)]);
    keep(kept);
    propose(logits.index_select(0, long_tensor(taken_rows, logits.device())), process);
    // Every candidate row of an input continues the cache of the row it took.
    for (int64_t row : taken_rows) out.continued.insert(out.continued.end(), static_cast<size_t>(k_), row);
    return out;
}

// The inputs whose last token is </s>, whose length is reached or that a stop string or max_time
// ends (transformers' stopping criteria, checked once a token is appended); `kept` gets the others.
std::vector<ContrastiveSearch::Finished> ContrastiveSearch::take_finished(std::vector<int64_t>* kept) const {
    const int64_t generated = sequences_.size(1) - 1;
    const at::Tensor seqs = sequences_.to(at::kCPU).contiguous();
    const int64_t width = seqs.size(1);
    const bool time_up = generated >= 1 && stop_.time_up();
    const std::vector<char> stopped = stop_.rows_ending(seqs.data_ptr<int64_t>(), seqs.size(0), width);  // none without strings
    std::vector<Finished> finished;
    for (int64_t a = 0; a < seqs.size(0); ++a) {
        const int64_t* row = seqs.data_ptr<int64_t>() + a * width;
        const bool ends = row[width - 1] == eos_ || generated == max_new_tokens_ || time_up || stopped[static_cast<size_t>(a)];
        if (generated < 1 || !ends) {
            kept->push_back(a);
            continue;
        }
        finished.push_back(
            {alive_[static_cast<size_t>(a)], std::vector<int>(row + 1, row + width), scores_[static_cast<size_t>(a)]});
    }
    return finished;
}

// Only the inputs `kept` (indices into the alive ones) decode on.
void ContrastiveSearch::keep(const std::vector<int64_t>& kept) {
    if (static_cast<int64_t>(kept.size()) == static_cast<int64_t>(alive_.size())) return;
    std::vector<int64_t> alive;
    std::vector<double> scores;
    for (int64_t a : kept) {
        alive.push_back(alive_[static_cast<size_t>(a)]);
        scores.push_back(scores_[static_cast<size_t>(a)]);
    }
    alive_ = std::move(alive);
    scores_ = std::move(scores);
    const at::Tensor index = long_tensor(kept, device_);
    sequences_ = sequences_.index_select(0, index);
    context_ = context_.index_select(0, index.to(context_.device()));
}

// The next k candidates of every input from its taken token's logits [alive, vocab], after the
// processors: the top_k of the softmax, as transformers takes them.
void ContrastiveSearch::propose(at::Tensor logits, const Process& process) {
    process(logits, sequences_, alive_);
    const auto [probs, ids] = at::topk(at::softmax(logits, -1), k_, -1);
    probs_ = probs;
    tokens_ = ids.reshape(-1);
    logprobs_ = at::log_softmax(logits, -1).gather(1, ids);
}

}  // namespace t5s
