#include "serve/batch_decoder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <limits>
#include <map>

#include "serve/batch_cache.h"
#include "spans/sentinel_guard.h"
#include "t5s/error.h"
#include "torch/beam_search.h"
#include "torch/logits_processors.h"
#include "torch/step_decoding.h"
#include "torch/t5_network.h"
#include "torch/torch_errors.h"
#include "torch/vocab_kernels.h"

namespace t5s::serve {
namespace {

// One input's rows. Greedy / sampling rows leave one by one as they end; a beam group keeps its
// beams until the search is done.
struct Group {
    GroupId id = 0;
    GenerationOptions options;
    int64_t start = 0;  // cache position of the group's first token
    int64_t rows = 0;   // rows in the batch now
    int step = 0;
    std::unique_ptr<BeamSearch> beam;
    std::vector<int> sentinels;  // protected spans (options.keep_sentinels): the input's sentinels
    spans::SentinelRange sentinel_range;
    // Greedy / sampling.
    at::Generator generator;
    at::Tensor sequences;              // [rows, 1 + step] (start token included)
    std::vector<int64_t> active_rows;  // candidate index of each row
    at::Tensor scores_sum;             // [candidates] double
    std::vector<Candidate> out;
};

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The row layout after a step: which groups stay (local[i]: the rows of group i that continue,
// empty when it leaves), in which order. A group that leaves has its place taken by the last group
// when that one has as many rows, so that one group's rows move instead of every row behind it.
std::vector<size_t> next_order(const std::vector<int64_t>& old_rows, const std::vector<std::vector<int64_t>>& local) {
    std::vector<size_t> order;
    for (size_t i = 0; i < local.size(); ++i) {
        if (!local[i].empty()) order.push_back(i);
    }
    for (size_t f = 0; f < local.size() && !order.empty(); ++f) {
        const size_t last = order.back();
        if (!local[f].empty() || last < f || static_cast<int64_t>(local[last].size()) != old_rows[f]) continue;
        order.pop_back();
        order.insert(std::upper_bound(order.begin(), order.end(), f), last);
    }
    return order;
}

const StepDecoding& step_decoding_of(const Model& model) {
    const StepDecoding* decoding = model.step_decoding();
    if (!decoding) throw Error(ErrorCode::Unsupported, "this model cannot be served: it has no step-by-step decoding");
    return *decoding;
}

}  // namespace

struct BatchDecoder::Impl {
    const Tokenizer* tokenizer;  // sentinels of protected spans (keep_sentinels); may be null without
    const StepDecoding& net;
    BatchCache cache;
    std::vector<std::unique_ptr<Group>> groups;  // in row order; a group's rows are contiguous
    std::map<GroupId, std::vector<Candidate>> results;

    Impl(const StepDecoding& n, const Tokenizer* t) : tokenizer(t), net(n) {}

    int64_t total_rows() const { return cache.rows(); }

    void reset() {
        cache = BatchCache();
        groups.clear();
    }

    // Positions for `need` more tokens: the cache moves left past positions no row uses any more
    // before it grows; growth leaves headroom so that arrivals on consecutive steps do not each
    // reallocate. Returns the capacity the cache needs.
    int64_t make_room(int64_t need) {
        if (groups.empty()) cache.clear();
        const int64_t capacity = cache.state().capacity;
        if (cache.length() + need <= capacity) return capacity;
        std::vector<int64_t> starts;
        for (const auto& g : groups) starts.insert(starts.end(), static_cast<size_t>(g->rows), g->start);
        const int64_t shift = cache.compact(starts);
        for (auto& g : groups) g->start -= shift;
        if (cache.length() + need <= capacity) return capacity;
        return std::max(cache.length() + need, capacity + capacity / 2);
    }

    // Keeps local[i] of group i (in the order next_order picks) and moves the cache rows with them.
    void rearrange(const std::vector<std::vector<int64_t>>& local);

    void add(const std::vector<GroupSpec>& specs);
    void add_encoded(const GroupSpec& spec, const at::Tensor& encoded, const at::Tensor& mask);
    std::vector<int64_t> step_greedy(Group& g, at::Tensor logits, StepReport& report);
    StepReport step();
};

void BatchDecoder::Impl::rearrange(const std::vector<std::vector<int64_t>>& local) {
    std::vector<int64_t> old_rows, offsets;
    int64_t offset = 0;
    for (const auto& g : groups) {
        old_rows.push_back(g->rows);
        offsets.push_back(offset);
        offset += g->rows;
    }
    const std::vector<size_t> order = next_order(old_rows, local);
    std::vector<int64_t> sources;
    std::vector<std::unique_ptr<Group>> kept;
    for (size_t i : order) {
        for (int64_t row : local[i]) sources.push_back(offsets[i] + row);
        groups[i]->rows = static_cast<int64_t>(local[i].size());
        kept.push_back(std::move(groups[i]));
    }
    groups = std::move(kept);
    if (groups.empty()) return cache.clear();
    cache.relocate(sources);
}

void BatchDecoder::Impl::add(const std::vector<GroupSpec>& specs) {
    std::vector<at::Tensor> ids;
    for (const auto& spec : specs)
        ids.push_back(long_tensor(std::vector<int64_t>(spec.input_ids.begin(), spec.input_ids.end()), net.device()).view({1, -1}));
    const std::vector<at::Tensor> encoded = net.encode_each(ids);
    for (size_t i = 0; i < specs.size(); ++i) add_encoded(specs[i], encoded[i], at::ones_like(ids[i]));
}

void BatchDecoder::Impl::add_encoded(const GroupSpec& spec, const at::Tensor& enc, const at::Tensor& mask) {
    auto g = std::make_unique<Group>();
    g->id = spec.id;
    g->options = spec.options;
    const GenerationOptions& o = g->options;
    const int64_t n = rows_for(o);
    const auto dev = net.device();
    const int64_t capacity = make_room(o.max_new_tokens + 1);
    // The position-bias table is only computed when the cache grows (it is capacity^2 x heads).
    const bool new_table = capacity > cache.state().capacity;
    const DecoderState sub = net.start_decoding(enc, mask, new_table ? capacity : 1, n);
    g->start = cache.append(sub, n, capacity);
    g->rows = n;
    if (o.keep_sentinels) {
        if (!tokenizer) throw Error(ErrorCode::InvalidArgument, "protected spans need the model's tokenizer");
        g->sentinel_range = spans::sentinel_range(*tokenizer);
        g->sentinels = spans::sentinels_in(spec.input_ids, g->sentinel_range);
    }
    if (o.num_beams > 1) {
        g->beam = std::make_unique<BeamSearch>(1, o, net.config(), dev, net.kernels().vocab);
        if (o.keep_sentinels) g->beam->set_sentinel_guard({g->sentinel_range, {g->sentinels}});
    } else {
        g->generator = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed < 0 ? 0 : o.seed));
        g->sequences = at::full({n, 1}, net.config().decoder_start_token_id, at::TensorOptions().dtype(at::kLong).device(dev));
        for (int64_t r = 0; r < n; ++r) g->active_rows.push_back(r);
        g->scores_sum = at::zeros({n}, enc.options().dtype(at::kDouble));
        g->out.resize(static_cast<size_t>(n));
    }
    groups.push_back(std::move(g));
}

// One greedy / sampling step for one group's rows; returns the rows (of the group) kept.
std::vector<int64_t> BatchDecoder::Impl::step_greedy(Group& g, at::Tensor logits, StepReport& report) {
    const GenerationOptions& o = g.options;
    const int64_t eos = net.config().eos_token_id;
    at::Tensor next, next_logprob;
    process_logits(logits, g.sequences, o, eos, /*include_warpers=*/false);
    if (o.keep_sentinels) {
        const std::vector<const std::vector<int>*> required(static_cast<size_t>(g.rows), &g.sentinels);
        apply_sentinel_guard(logits, g.sequences, required, g.sentinel_range, o.max_new_tokens, eos);
    }
    if (o.do_sample) {
        next = sample_tokens(logits, o, g.generator, &next_logprob);
    } else if (!greedy_pick_cpu(logits, next, next_logprob, net.kernels().vocab)) {
        next = std::get<1>(logits.max(-1));
        next_logprob = at::log_softmax(logits, -1).gather(1, next.unsqueeze(1)).squeeze(1);
    }
    g.scores_sum.index_add_(0, long_tensor(g.active_rows, logits.device()), next_logprob.to(at::kDouble));
    g.sequences = at::cat({g.sequences, next.unsqueeze(1)}, 1);
    g.step += 1;
    const bool last = g.step == o.max_new_tokens;
    const at::Tensor done = (next == eos).to(at::kCPU).contiguous();
    const bool* ended = done.data_ptr<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < g.rows; ++i) {
        if (!last && !ended[i]) keep.push_back(i);
    }
    if (keep.size() == static_cast<size_t>(g.rows)) return keep;
    const at::Tensor seqs = g.sequences.to(at::kCPU).contiguous();
    const at::Tensor scores = g.scores_sum.to(at::kCPU).contiguous();
    const int64_t width = seqs.size(1);
    std::vector<int64_t> still_active;
    for (int64_t i = 0; i < g.rows; ++i) {
        const int64_t r = g.active_rows[static_cast<size_t>(i)];
        if (!last && !ended[i]) {
            still_active.push_back(r);
            continue;
        }
        const int64_t* row = seqs.data_ptr<int64_t>() + i * width;
        Candidate c;
        c.ids.assign(row + 1, row + width);
        c.score = scores.data_ptr<double>()[r];
        g.out[static_cast<size_t>(r)] = c;
        report.rows_finished.push_back({g.id, static_cast<int>(r), std::move(c)});
    }
    if (keep.size() != static_cast<size_t>(g.rows)) {
        g.sequences = g.sequences.index_select(0, long_tensor(keep, g.sequences.device()));
        g.active_rows = std::move(still_active);
    }
    return keep;
}

StepReport BatchDecoder::Impl::step() {
    StepReport report;
    if (groups.empty()) return report;
    std::vector<at::Tensor> tokens;
    for (const auto& g : groups) tokens.push_back(g->beam ? g->beam->last_tokens() : g->sequences.select(1, g->step));
    report.rows = static_cast<int>(total_rows());
    at::Tensor logits = net.decode_step(cache.state(), at::cat(tokens, 0));
    std::vector<std::vector<int64_t>> local(groups.size());
    int64_t offset = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        Group& g = *groups[i];
        at::Tensor slice = logits.narrow(0, offset, g.rows);
        offset += g.rows;
        if (g.beam) {
            const at::Tensor order = g.beam->step(slice, g.options).to(at::kCPU, at::kLong).contiguous();
            if (!g.beam->done()) {
                local[i].assign(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel());
            } else {
                auto best = g.beam->results(g.options.num_return_sequences);
                auto& out = results[g.id];
                for (auto& s : best[0]) out.push_back(Candidate{"", std::move(s.ids), s.score});
            }
        } else {
            local[i] = step_greedy(g, slice, report);
            if (local[i].empty()) results[g.id] = std::move(g.out);
        }
        if (local[i].empty()) report.groups_finished.push_back(g.id);
    }
    rearrange(local);
    return report;
}

BatchDecoder::BatchDecoder(const Model& model)
    : impl_(std::make_unique<Impl>(step_decoding_of(model), model.has_tokenizer() ? &model.tokenizer() : nullptr)) {}
BatchDecoder::BatchDecoder(const StepDecoding& net, const Tokenizer* tokenizer) : impl_(std::make_unique<Impl>(net, tokenizer)) {}
BatchDecoder::~BatchDecoder() = default;

int BatchDecoder::rows_for(const GenerationOptions& o) {
    if (o.num_beams > 1) return o.num_beams;
    return o.do_sample ? o.num_return_sequences : 1;
}

void BatchDecoder::add(const std::vector<GroupSpec>& specs) {
    if (specs.empty()) return;
    c10::InferenceMode guard;
    const size_t groups_before = impl_->groups.size();
    try {
        with_out_of_memory_as_error([&] {
            impl_->add(specs);
            return 0;
        });
    } catch (...) {
        // All or none: the groups this call added before the failure leave again.
        std::vector<GroupId> added;
        for (size_t i = groups_before; i < impl_->groups.size(); ++i) added.push_back(impl_->groups[i]->id);
        for (GroupId id : added) remove(id);
        throw;
    }
}

void BatchDecoder::add(const GroupSpec& spec) { add(std::vector<GroupSpec>{spec}); }

void BatchDecoder::remove(GroupId group) {
    c10::InferenceMode guard;
    impl_->results.erase(group);
    auto& groups = impl_->groups;
    std::vector<std::vector<int64_t>> local(groups.size());
    bool found = false;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (groups[i]->id == group) {
            found = true;
            continue;
        }
        for (int64_t r = 0; r < groups[i]->rows; ++r) local[i].push_back(r);
    }
    if (found) impl_->rearrange(local);
}

void BatchDecoder::merge_live(GroupId group, const GenerationOptions& live) {
    for (auto& g : impl_->groups) {
        if (g->id == group) g->options = merge_step_settings(g->options, live);
    }
}

int BatchDecoder::rows_of(GroupId group) const {
    for (const auto& g : impl_->groups) {
        if (g->id == group) return static_cast<int>(g->rows);
    }
    return 0;
}

StepReport BatchDecoder::step() {
    c10::InferenceMode guard;
    try {
        return with_out_of_memory_as_error([&] { return impl_->step(); });
    } catch (...) {
        impl_->reset();
        throw;
    }
}

std::vector<Candidate> BatchDecoder::take_results(GroupId group) {
    auto it = impl_->results.find(group);
    if (it == impl_->results.end()) return {};
    std::vector<Candidate> out = std::move(it->second);
    impl_->results.erase(it);
    return out;
}

void BatchDecoder::use_threads_here(int threads) {
    if (threads > 0) at::set_num_threads(threads);
}

int BatchDecoder::rows() const {
    return static_cast<int>(impl_->total_rows());
}
int BatchDecoder::groups() const {
    return static_cast<int>(impl_->groups.size());
}

}  // namespace t5s::serve
