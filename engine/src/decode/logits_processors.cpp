#include "decode/logits_processors.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "decode/token_processors.h"
#include "t5s/error.h"

namespace t5s {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// at::topk(scores, n) for a CPU float matrix (values descending). One pass per row with a min-heap
// of n entries: ATen's topk partially sorts every row and is several times slower at V = 32k.
// Only the values, and the index set when the n-th value is not tied, are guaranteed to match
// at::topk. Returns false on a NaN (at::topk ranks NaN first; the caller falls back to it).
bool cpu_topk(const at::Tensor& scores, int64_t n, at::Tensor* values, at::Tensor* indices) {
    const int64_t rows = scores.size(0), V = scores.size(1);
    *values = at::empty({rows, n}, scores.options());
    *indices = at::empty({rows, n}, scores.options().dtype(at::kLong));
    const float* in = scores.data_ptr<float>();
    float* out_v = values->data_ptr<float>();
    int64_t* out_i = indices->data_ptr<int64_t>();
    std::atomic<bool> nan{false};
    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        using Entry = std::pair<float, int64_t>;
        // `better` as the heap's "less": the worst entry (smallest value, then latest index) on top.
        auto better = [](const Entry& a, const Entry& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        };
        std::vector<Entry> heap;
        for (int64_t r = begin; r < end; ++r) {
            const float* x = in + r * V;
            heap.clear();
            for (int64_t i = 0; i < n; ++i) {
                if (std::isnan(x[i])) {
                    nan = true;
                    return;
                }
                heap.emplace_back(x[i], i);
            }
            std::make_heap(heap.begin(), heap.end(), better);
            float floor = heap.front().first;
            for (int64_t i = n; i < V; ++i) {
                if (!(x[i] <= floor)) {  // larger, or NaN
                    if (std::isnan(x[i])) {
                        nan = true;
                        return;
                    }
                    std::pop_heap(heap.begin(), heap.end(), better);
                    heap.back() = {x[i], i};
                    std::push_heap(heap.begin(), heap.end(), better);
                    floor = heap.front().first;
                }
            }
            std::sort_heap(heap.begin(), heap.end(), better);  // best first
            for (int64_t i = 0; i < n; ++i) out_v[r * n + i] = heap[i].first, out_i[r * n + i] = heap[i].second;
        }
    });
    return !nan;
}

std::tuple<at::Tensor, at::Tensor> topk_rows(const at::Tensor& scores, int64_t n) {
    if (scores.is_cpu() && scores.scalar_type() == at::kFloat && scores.dim() == 2 && scores.is_contiguous()) {
        at::Tensor v, i;
        if (cpu_topk(scores, n, &v, &i)) return {v, i};
    }
    return at::topk(scores, n);
}
}  // namespace

std::tuple<at::Tensor, at::Tensor> topk_distinct_fast(const at::Tensor& scores, int64_t k) {
    const bool host = scores.is_cpu() && scores.scalar_type() == at::kFloat && scores.dim() == 2 && scores.is_contiguous();
    if (!host || k + 1 > scores.size(1)) return at::topk(scores, k);
    at::Tensor v, i;
    if (!cpu_topk(scores, k + 1, &v, &i)) return at::topk(scores, k);
    // Distinct top k+1 values: one sorted answer exists, and it is at::topk's. A tie anywhere
    // there leaves the order (or set) to at::topk's implementation: ask it.
    const float* p = v.data_ptr<float>();
    for (int64_t r = 0; r < v.size(0); ++r) {
        for (int64_t j = 0; j < k; ++j) {
            if (!(p[r * (k + 1) + j] > p[r * (k + 1) + j + 1])) return at::topk(scores, k);
        }
    }
    return {v.narrow(1, 0, k), i.narrow(1, 0, k)};
}

namespace {
// Host copies of rows' token sequences [N, L].
at::Tensor host_longs(const at::Tensor& t) { return t.to(at::kCPU, at::kLong).contiguous(); }

void ban(at::Tensor& scores, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
    if (rows.empty()) return;
    auto opts = at::TensorOptions().dtype(at::kLong);
    at::Tensor r = at::tensor(rows, opts).to(scores.device()), c = at::tensor(cols, opts).to(scores.device());
    scores.index_put_({r, c}, at::scalar_tensor(kNegInf, scores.options()));
}
}  // namespace

void apply_repetition_penalty(at::Tensor& scores, const at::Tensor& sequences, float penalty) {
    if (penalty == 1.0f) return;
    at::Tensor seen = scores.gather(1, sequences);
    seen = at::where(seen < 0, seen * penalty, seen / penalty);
    scores.scatter_(1, sequences, seen);
}

void apply_no_repeat_ngram(at::Tensor& scores, const at::Tensor& sequences, int n) {
    const int64_t len = sequences.size(1);
    if (n <= 0 || len + 1 < n) return;
    const at::Tensor host = host_longs(sequences);
    const int64_t* data = host.data_ptr<int64_t>();
    std::vector<int64_t> rows, cols;
    for (int64_t r = 0; r < host.size(0); ++r) {
        const int64_t* s = data + r * len;
        // The last n-1 tokens form the prefix; any earlier n-gram with that prefix bans its last token.
        for (int64_t start = 0; start + n <= len; ++start) {
            bool match = true;
            for (int k = 0; k < n - 1 && match; ++k) match = s[start + k] == s[len - (n - 1) + k];
            if (match) {
                rows.push_back(r);
                cols.push_back(s[start + n - 1]);
            }
        }
    }
    ban(scores, rows, cols);
}

namespace {

void require_sources(const RowSources& sources, const at::Tensor& scores, const char* what) {
    if (static_cast<int64_t>(sources.size()) != scores.size(0) ||
        std::any_of(sources.begin(), sources.end(), [](const std::vector<int>* s) { return s == nullptr; }))
        throw std::logic_error(std::string(what) + " needs every row's input ids");
}
}  // namespace

void apply_encoder_repetition_penalty(at::Tensor& scores, const RowSources& sources, float penalty) {
    if (penalty == 1.0f) return;
    require_sources(sources, scores, "encoder_repetition_penalty");
    const double inverse = 1.0 / static_cast<double>(penalty);  // transformers keeps 1 / penalty
    for (int64_t r = 0; r < scores.size(0); ++r) {
        const std::vector<int>& src = *sources[static_cast<size_t>(r)];
        if (src.empty()) continue;
        at::Tensor row = scores.select(0, r);
        const at::Tensor ids =
            at::tensor(std::vector<int64_t>(src.begin(), src.end()), at::TensorOptions().dtype(at::kLong)).to(scores.device());
        at::Tensor seen = row.gather(0, ids);
        seen = at::where(seen < 0, seen * inverse, seen / inverse);
        row.scatter_(0, ids, seen);
    }
}

void apply_encoder_no_repeat_ngram(at::Tensor& scores, const at::Tensor& sequences, const RowSources& sources, int n) {
    if (n <= 0) return;
    require_sources(sources, scores, "encoder_no_repeat_ngram_size");
    const at::Tensor host = host_longs(sequences);
    const int64_t len = host.size(1), prefix = n - 1;
    if (len < prefix) return;  // transformers' slice is then shorter than any prefix: nothing matches
    std::vector<int64_t> rows, cols;
    for (int64_t r = 0; r < host.size(0); ++r) {
        const int64_t* tail = host.data_ptr<int64_t>() + r * len + (len - prefix);
        const std::vector<int>& src = *sources[static_cast<size_t>(r)];
        for (size_t start = 0; start + static_cast<size_t>(n) <= src.size(); ++start) {
            bool match = true;
            for (int64_t k = 0; k < prefix && match; ++k) match = src[start + static_cast<size_t>(k)] == tail[k];
            if (match) {
                rows.push_back(r);
                cols.push_back(src[start + static_cast<size_t>(prefix)]);
            }
        }
    }
    ban(scores, rows, cols);
}

void apply_bad_words(at::Tensor& scores, const at::Tensor& sequences, const TokenIdLists& bad, int64_t eos_id) {
    if (bad.empty()) return;
    if (const int64_t id = token_outside_vocab(bad, scores.size(1)); id >= 0)
        throw Error(ErrorCode::InvalidArgument, "bad_words_ids: token id " + std::to_string(id) + " is outside the vocabulary (" +
                                                    std::to_string(scores.size(1)) + " tokens)");
    const at::Tensor host = host_longs(sequences);
    const int64_t len = host.size(1);
    std::vector<int64_t> rows, cols;
    for (const std::vector<int>& seq : bad) {
        const int64_t prefix = static_cast<int64_t>(seq.size()) - 1;
        if (prefix == 0 && seq[0] == eos_id) continue;         // transformers drops [eos]
        if (static_cast<int64_t>(seq.size()) > len) continue;  // longer than the sequence so far
        for (int64_t r = 0; r < host.size(0); ++r) {
            const int64_t* tail = host.data_ptr<int64_t>() + r * len + (len - prefix);
            bool match = true;
            for (int64_t k = 0; k < prefix && match; ++k) match = tail[k] == seq[static_cast<size_t>(k)];
            if (match) {
                rows.push_back(r);
                cols.push_back(seq.back());
            }
        }
    }
    ban(scores, rows, cols);
}

int64_t token_outside_vocab(const TokenIdLists& lists, int64_t vocab) {
    for (const auto& list : lists)
        for (int id : list)
            if (id < 0 || id >= vocab) return id;
    return -1;
}

void apply_min_new_tokens(at::Tensor& scores, int64_t new_tokens, int min_new_tokens, int64_t eos_id) {
    if (new_tokens < min_new_tokens) scores.select(1, eos_id).fill_(kNegInf);
}

void apply_temperature(at::Tensor& scores, float temperature) {
    if (temperature != 1.0f) scores.div_(temperature);
}

void apply_top_k(at::Tensor& scores, int top_k) {
    if (top_k <= 0) return;
    const int64_t k = std::min<int64_t>(top_k, scores.size(-1));
    at::Tensor kth = std::get<0>(at::topk(scores, k)).narrow(-1, k - 1, 1);
    scores.masked_fill_(scores < kth, kNegInf);
}

void apply_top_p(at::Tensor& scores, float top_p) {
    if (top_p >= 1.0f) return;
    auto [sorted, indices] = at::sort(scores, -1, /*descending=*/false);
    at::Tensor cumulative = sorted.softmax(-1).cumsum(-1);
    at::Tensor remove_sorted = cumulative <= (1.0 - top_p);
    remove_sorted.narrow(-1, remove_sorted.size(-1) - 1, 1).fill_(false);  // keep at least one token
    at::Tensor remove = remove_sorted.scatter(1, indices, remove_sorted);
    scores.masked_fill_(remove, kNegInf);
}

void apply_min_p(at::Tensor& scores, float min_p) {
    if (min_p <= 0.0f) return;  // transformers applies 0 too: it removes nothing
    const at::Tensor probs = at::softmax(scores, -1);
    const at::Tensor top = std::get<0>(probs.max(-1, /*keepdim=*/true));
    // transformers keeps the best token by an argsort besides; with min_p <= 1 it is never below the cut.
    scores.masked_fill_(probs < top * static_cast<double>(min_p), kNegInf);
}

void apply_typical_p(at::Tensor& scores, float mass) {
    if (mass >= 1.0f) return;
    const at::Tensor normalized = at::log_softmax(scores, -1);
    const at::Tensor p = normalized.exp();
    const at::Tensor entropy = -(normalized * p).nansum(-1, /*keepdim=*/true);
    const at::Tensor shifted = (-normalized - entropy).abs();
    auto [sorted_scores, sorted_indices] = at::sort(shifted, -1, /*descending=*/false);
    const at::Tensor cumulative = scores.gather(-1, sorted_indices).softmax(-1).cumsum(-1);
    at::Tensor last = (cumulative < static_cast<double>(mass)).sum(1);
    last.clamp_max_(sorted_scores.size(-1) - 1);
    at::Tensor remove_sorted = sorted_scores > sorted_scores.gather(1, last.view({-1, 1}));
    remove_sorted.narrow(-1, 0, 1).fill_(false);  // min_tokens_to_keep = 1
    scores.masked_fill_(remove_sorted.scatter(1, sorted_indices, remove_sorted), kNegInf);
}

namespace {
// Epsilon and eta sampling: tokens of probability below `cut` [N, 1] go, except the most likely.
void drop_below(at::Tensor& scores, const at::Tensor& probs, const at::Tensor& cut) {
    const at::Tensor best = std::get<0>(at::topk(scores, 1)).narrow(-1, 0, 1);
    scores.masked_fill_((probs < cut) & (scores < best), kNegInf);
}
}  // namespace

void apply_epsilon_cutoff(at::Tensor& scores, float epsilon) {
    if (!(epsilon > 0.0f && epsilon < 1.0f)) return;
    const at::Tensor probs = at::softmax(scores, -1);
    drop_below(scores, probs, at::scalar_tensor(static_cast<double>(epsilon), probs.options()));
}

void apply_eta_cutoff(at::Tensor& scores, float eta) {
    if (!(eta > 0.0f && eta < 1.0f)) return;
    const at::Tensor probs = at::softmax(scores, -1);
    // torch.distributions.Categorical(logits=scores).entropy(), step by step.
    const at::Tensor logits = scores - scores.logsumexp(-1, /*keepdim=*/true);
    const at::Tensor clamped = logits.clamp_min(std::numeric_limits<float>::lowest());
    const at::Tensor entropy = -(clamped * at::softmax(logits, -1)).sum(-1);
    const at::Tensor epsilon = at::scalar_tensor(static_cast<double>(eta), probs.options());
    const at::Tensor cut = at::min(epsilon, epsilon.sqrt() * (-entropy).exp()).unsqueeze(-1);
    drop_below(scores, probs, cut);
}

// The warpers computed on top-k candidates only are temperature, top-k and top-p; the others
// take the full-vocabulary path, which is transformers' own.
bool only_candidate_warpers(const GenerationOptions& o) {
    return o.min_p <= 0.0f && o.typical_p >= 1.0f && !(o.epsilon_cutoff > 0.0f && o.epsilon_cutoff < 1.0f) &&
           !(o.eta_cutoff > 0.0f && o.eta_cutoff < 1.0f);
}

bool warp_top_k_candidates(const at::Tensor& scores, const GenerationOptions& o, at::Tensor* ids, at::Tensor* warped) {
    const int64_t k = o.top_k, V = scores.size(-1);
    if (k <= 0 || k >= V || !only_candidate_warpers(o)) return false;
    // k + 1 values: the (k+1)-th tells whether the k-th is tied with a token outside the set.
    auto [values, indices] = topk_rows(scores, k + 1);
    // Same temperature as the full path (division is monotone, so the top-k set is the same; a
    // tie it creates shows up in the check below).
    apply_temperature(values, o.temperature);
    at::Tensor kth = values.narrow(-1, k - 1, 1), next = values.narrow(-1, k, 1);
    if ((kth == next).any().item<bool>()) return false;
    // The candidates in token-id order, as the vocabulary is: a draw then picks a token by its
    // place in the vocabulary, not by its rank, so that two near-equal scores whose ranks swap with
    // batching noise (a 1e-7 difference) do not swap the tokens the same draws pick.
    const at::Tensor top_ids = indices.narrow(-1, 0, k);
    const at::Tensor by_id = std::get<1>(top_ids.sort(-1));
    at::Tensor cand = values.narrow(-1, 0, k).gather(-1, by_id).contiguous();
    // Top-p on the k candidates equals top-p on the masked vocabulary: masked tokens have zero mass.
    apply_top_p(cand, o.top_p);
    *ids = top_ids.gather(-1, by_id);
    *warped = cand;
    return true;
}

at::Tensor sample_tokens(at::Tensor& scores, const GenerationOptions& o, at::Generator& generator, at::Tensor* logprob) {
    at::Tensor ids, warped;
    // renormalize_logits: transformers' log-softmax over the whole vocabulary, then the draw's softmax.
    if (!o.renormalize_logits && warp_top_k_candidates(scores, o, &ids, &warped)) {
        // Softmax and draw over the k candidates only: the vocabulary's other tokens have zero mass.
        at::Tensor pick = at::multinomial(at::softmax(warped, -1), 1, false, generator);
        *logprob = at::log_softmax(warped, -1).gather(1, pick).squeeze(1);
        return ids.gather(1, pick).squeeze(1);
    }
    apply_warpers(scores, o);
    apply_renormalize(scores, o.renormalize_logits);
    at::Tensor next = at::multinomial(at::softmax(scores, -1), 1, false, generator);
    *logprob = at::log_softmax(scores, -1).gather(1, next).squeeze(1);
    return next.squeeze(1);
}

void apply_sentinel_guard(at::Tensor& scores, const at::Tensor& sequences,
                          const std::vector<const std::vector<int>*>& row_required, spans::SentinelRange range,
                          int max_new_tokens, int64_t eos_id) {
    const int64_t lo = range.lo, n = std::min<int64_t>(range.hi, scores.size(1)) - lo;
    if (n <= 0) return;
    at::Tensor slice = scores.narrow(1, lo, n);
    // The scores the allowed sentinels keep: a copy (to() alone would alias a CPU float slice).
    const at::Tensor saved = slice.to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
    const at::Tensor eos_saved =
        scores.select(1, eos_id).to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
    slice.fill_(kNegInf);
    const at::Tensor host = host_longs(sequences);
    const int64_t len = host.size(1);
    std::vector<int64_t> rows, cols, eos_rows, forced_rows;
    std::vector<float> values;
    for (int64_t r = 0; r < host.size(0) && r < static_cast<int64_t>(row_required.size()); ++r) {
        if (!row_required[r] || row_required[r]->empty()) continue;
        const spans::GuardStep g =
            spans::guard_step(*row_required[r], host.data_ptr<int64_t>() + r * len + 1, len - 1, max_new_tokens, range);
        if (g.remaining.empty()) continue;
        eos_rows.push_back(r);
        if (g.force) forced_rows.push_back(r);
        for (int id : g.remaining) {
            float v = saved.data_ptr<float>()[r * n + (id - lo)];
            if (g.force && !std::isfinite(v)) v = -1.0e4f;  // banned by another processor: forced all the same
            // Not forced: the model's wish to end becomes a wish to place an owed span (a model that
            // never emits sentinels would otherwise run to the length limit).
            if (!g.force) v = std::max(v, eos_saved.data_ptr<float>()[r]);
            rows.push_back(r);
            cols.push_back(id);
            values.push_back(v);
            if (g.force) break;
        }
    }
    const auto dev = scores.device();
    auto longs = [&](const std::vector<int64_t>& v) { return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(dev); };
    const at::Tensor neg_inf = at::scalar_tensor(kNegInf, scores.options());
    if (!eos_rows.empty()) scores.index_put_({longs(eos_rows), longs(std::vector<int64_t>(eos_rows.size(), eos_id))}, neg_inf);
    if (!forced_rows.empty()) scores.index_fill_(0, longs(forced_rows), kNegInf);
    if (!rows.empty()) scores.index_put_({longs(rows), longs(cols)}, at::tensor(values).to(dev, scores.scalar_type()));
}

void process_logits(at::Tensor& scores, const at::Tensor& sequences, const GenerationOptions& o, int64_t eos_id,
                    bool include_warpers, const RowSources& sources, bool sequence_bias_done) {
    // transformers' _get_logits_processor order.
    if (!sequence_bias_done) apply_sequence_bias(scores, sequences, o.sequence_bias);
    apply_encoder_repetition_penalty(scores, sources, o.encoder_repetition_penalty);
    apply_repetition_penalty(scores, sequences, o.repetition_penalty);
    apply_no_repeat_ngram(scores, sequences, o.no_repeat_ngram_size);
    apply_encoder_no_repeat_ngram(scores, sequences, sources, o.encoder_no_repeat_ngram_size);
    apply_bad_words(scores, sequences, o.bad_words_ids, eos_id);
    apply_min_new_tokens(scores, sequences.size(1) - 1, o.min_new_tokens, eos_id);
    const int64_t length = sequences.size(1);
    apply_forced_bos(scores, length, o.forced_bos_token_id);
    apply_forced_eos(scores, length, o.max_new_tokens + 1, o.forced_eos_token_id);
    apply_length_decay(scores, length, o.exponential_decay_length_penalty, eos_id);
    apply_suppress_tokens(scores, o.suppress_tokens);
    apply_begin_suppress_tokens(scores, length, begin_suppress_index(o), o.begin_suppress_tokens);
    if (include_warpers) apply_warpers(scores, o);
    // Last of all, after the warpers: sampling (which warps later, in sample_tokens) renormalizes there.
    if (include_warpers || !o.do_sample) apply_renormalize(scores, o.renormalize_logits);
}

void apply_warpers(at::Tensor& scores, const GenerationOptions& o) {
    apply_temperature(scores, o.temperature);
    apply_top_k(scores, o.top_k);
    apply_top_p(scores, o.top_p);
    apply_min_p(scores, o.min_p);
    apply_typical_p(scores, o.typical_p);
    apply_epsilon_cutoff(scores, o.epsilon_cutoff);
    apply_eta_cutoff(scores, o.eta_cutoff);
}

}  // namespace t5s
