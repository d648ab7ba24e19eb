#include "serve/batch_decoder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <limits>
#include <map>

#include "t5s/error.h"
#include "torch/beam_search.h"
#include "torch/logits_processors.h"
#include "torch/model_access.h"
#include "torch/torch_errors.h"
#include "torch/vocab_kernels.h"

namespace t5s::serve {
namespace {

// One input's rows. Greedy / sampling rows leave one by one as they end (as in
// decode_greedy_or_sample); a beam group keeps its beams until the search is done.
struct Group {
    GroupId id = 0;
    GenerationOptions options;
    int64_t start = 0;    // cache position of the group's first token
    int64_t rows = 0;     // rows in the batch now
    int step = 0;
    std::unique_ptr<BeamSearch> beam;
    // Greedy / sampling.
    at::Generator generator;
    at::Tensor sequences;              // [rows, 1 + step] (start token included)
    std::vector<int64_t> active_rows;  // candidate index of each row
    at::Tensor scores_sum;             // [candidates] double
    std::vector<Candidate> out;
    bool done = false;
};

at::Tensor long_tensor(const std::vector<int64_t>& v, at::Device device) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

double mask_value(at::ScalarType dtype) {
    if (dtype == at::kHalf) return -65504.0;
    if (dtype == at::kBFloat16) return -3.3895313892515355e38;
    return std::numeric_limits<float>::lowest();
}

}  // namespace

struct BatchDecoder::Impl {
    const T5Network& net;
    DecoderState st;
    std::vector<std::unique_ptr<Group>> groups;  // in row order; a group's rows are contiguous
    std::map<GroupId, std::vector<Candidate>> results;
    int64_t cross_len = 0;

    explicit Impl(const Model& model) : net(torch_network_of(model)) {}

    int64_t total_rows() const {
        int64_t n = 0;
        for (const auto& g : groups) n += g->rows;
        return n;
    }

    void reset() {
        st = DecoderState();
        groups.clear();
        cross_len = 0;
    }

    // The per-row key mask: positions before a row's group start are not its tokens.
    void rebuild_key_bias() {
        std::vector<int64_t> starts;
        for (const auto& g : groups) starts.insert(starts.end(), static_cast<size_t>(g->rows), g->start);
        const auto dev = st.self_k[0].device();
        at::Tensor pos = at::arange(st.capacity, at::TensorOptions().dtype(at::kLong).device(dev)).view({1, -1});
        at::Tensor before = pos < long_tensor(starts, dev).view({-1, 1});
        at::Tensor bias = at::zeros(before.sizes(), st.self_k[0].options());
        bias.masked_fill_(before, mask_value(bias.scalar_type()));
        st.self_key_bias = bias.view({before.size(0), 1, 1, st.capacity});
    }

    // Moves every row's cache left by the earliest group start, so that positions freed by groups
    // that left are reused.
    void compact() {
        int64_t shift = st.length;
        for (const auto& g : groups) shift = std::min(shift, g->start);
        if (shift <= 0) return;
        const int64_t keep = st.length - shift;
        for (auto* list : {&st.self_k, &st.self_v}) {
            for (auto& t : *list) {
                if (keep > 0) t.narrow(2, 0, keep).copy_(t.narrow(2, shift, keep).clone());
            }
        }
        st.length = keep;
        for (auto& g : groups) g->start -= shift;
    }

    // Makes room for `need` more positions; returns the capacity the batch needs then. Growth
    // leaves headroom so that arrivals on consecutive steps do not each reallocate the cache.
    int64_t ensure_capacity(int64_t need) {
        if (groups.empty()) return need;
        if (st.length + need > st.capacity) compact();
        if (st.length + need <= st.capacity) return st.capacity;
        return std::max(st.length + need, st.capacity + st.capacity / 2);
    }

    void grow(int64_t capacity, const at::Tensor& table) {
        if (capacity == st.capacity) return;
        for (auto* list : {&st.self_k, &st.self_v}) {
            for (auto& t : *list) {
                at::Tensor bigger = at::zeros({t.size(0), t.size(1), capacity, t.size(3)}, t.options());
                if (st.length > 0) bigger.narrow(2, 0, st.length).copy_(t.narrow(2, 0, st.length));
                t = bigger;
            }
        }
        st.capacity = capacity;
        st.self_bias_table = table;
    }

    // Pads cross-attention K/V [B, H, S, dk] and bias [B, 1, 1, S] along S with masked zeros.
    static void pad_cross(std::vector<at::Tensor>& ks, std::vector<at::Tensor>& vs, at::Tensor& bias, int64_t to) {
        const int64_t from = bias.size(3);
        if (from >= to) return;
        for (auto* list : {&ks, &vs}) {
            for (auto& t : *list) t = at::cat({t, at::zeros({t.size(0), t.size(1), to - from, t.size(3)}, t.options())}, 2);
        }
        at::Tensor pad = at::full({bias.size(0), 1, 1, to - from}, mask_value(bias.scalar_type()), bias.options());
        bias = at::cat({bias, pad}, 3);
    }

    void add(const GroupSpec& spec);
    std::vector<int64_t> step_greedy(Group& g, at::Tensor logits, StepReport& report);
    StepReport step();
    void select(const std::vector<int64_t>& keep);
};

void BatchDecoder::Impl::add(const GroupSpec& spec) {
    auto g = std::make_unique<Group>();
    g->id = spec.id;
    g->options = spec.options;
    const GenerationOptions& o = g->options;
    const int64_t n = rows_for(o);
    const auto dev = net.device();
    at::Tensor ids = long_tensor(std::vector<int64_t>(spec.input_ids.begin(), spec.input_ids.end()), dev).view({1, -1});
    at::Tensor mask = at::ones_like(ids);
    at::Tensor enc = net.encode(ids, mask);
    const int64_t capacity = ensure_capacity(o.max_new_tokens + 1);
    // The position-bias table is only computed when the cache grows (it is capacity^2 x heads).
    const bool new_table = groups.empty() || capacity != st.capacity;
    DecoderState sub = net.start_decoding(enc, mask, new_table ? capacity : 1, n);
    // Own cross K/V per row (the shared batch mixes inputs): the input's entry repeated.
    at::Tensor repeat = at::zeros({n}, at::TensorOptions().dtype(at::kLong).device(dev));
    for (auto* list : {&sub.cross_k, &sub.cross_v}) {
        for (auto& t : *list) t = t.index_select(0, repeat);
    }
    sub.cross_bias = sub.cross_bias.index_select(0, repeat);
    // Zeros before the group's start: masked keys must still be finite (0 x NaN is NaN).
    for (auto* list : {&sub.self_k, &sub.self_v}) {
        for (auto& t : *list) t = at::zeros({n, t.size(1), capacity, t.size(3)}, t.options());
    }
    if (groups.empty()) {
        st = std::move(sub);
        st.cross_share = 1;
        st.length = 0;
        st.capacity = capacity;
        cross_len = st.cross_bias.size(3);
    } else {
        if (new_table) grow(capacity, sub.self_bias_table);
        const int64_t s = std::max(cross_len, sub.cross_bias.size(3));
        pad_cross(st.cross_k, st.cross_v, st.cross_bias, s);
        pad_cross(sub.cross_k, sub.cross_v, sub.cross_bias, s);
        cross_len = s;
        for (size_t i = 0; i < st.self_k.size(); ++i) {
            st.self_k[i] = at::cat({st.self_k[i], sub.self_k[i]}, 0);
            st.self_v[i] = at::cat({st.self_v[i], sub.self_v[i]}, 0);
            st.cross_k[i] = at::cat({st.cross_k[i], sub.cross_k[i]}, 0);
            st.cross_v[i] = at::cat({st.cross_v[i], sub.cross_v[i]}, 0);
        }
        st.cross_bias = at::cat({st.cross_bias, sub.cross_bias}, 0);
        st.spare = at::Tensor();
    }
    g->start = st.length;
    g->rows = n;
    if (o.num_beams > 1) {
        g->beam = std::make_unique<BeamSearch>(1, o, net.config(), dev);
    } else {
        g->generator = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed < 0 ? 0 : o.seed));
        g->sequences = at::full({n, 1}, net.config().decoder_start_token_id, at::TensorOptions().dtype(at::kLong).device(dev));
        for (int64_t r = 0; r < n; ++r) g->active_rows.push_back(r);
        g->scores_sum = at::zeros({n}, enc.options().dtype(at::kDouble));
        g->out.resize(static_cast<size_t>(n));
    }
    groups.push_back(std::move(g));
    rebuild_key_bias();
}

// decode_greedy_or_sample's step for one group's rows; returns the rows (of the group) kept.
std::vector<int64_t> BatchDecoder::Impl::step_greedy(Group& g, at::Tensor logits, StepReport& report) {
    const GenerationOptions& o = g.options;
    const int64_t eos = net.config().eos_token_id;
    at::Tensor next, next_logprob;
    process_logits(logits, g.sequences, o, eos, /*include_warpers=*/false);
    if (o.do_sample) {
        next = sample_tokens(logits, o, g.generator, &next_logprob);
    } else if (!greedy_pick_cpu(logits, next, next_logprob)) {
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
    at::Tensor logits = net.decode_step(st, at::cat(tokens, 0));
    std::vector<int64_t> keep;
    int64_t offset = 0;
    for (auto& g : groups) {
        at::Tensor slice = logits.narrow(0, offset, g->rows);
        std::vector<int64_t> local;
        if (g->beam) {
            at::Tensor order = g->beam->step(slice, g->options).cpu();
            if (!g->beam->done()) {
                for (int64_t i = 0; i < order.size(0); ++i) local.push_back(order[i].item<int64_t>());
            } else {
                auto best = g->beam->results(g->options.num_return_sequences);
                auto& out = results[g->id];
                for (auto& s : best[0]) out.push_back(Candidate{"", std::move(s.ids), s.score});
            }
        } else {
            local = step_greedy(*g, slice, report);
            if (local.empty()) results[g->id] = std::move(g->out);
        }
        for (int64_t row : local) keep.push_back(offset + row);
        offset += g->rows;
        g->rows = static_cast<int64_t>(local.size());
        if (local.empty()) {
            g->done = true;
            report.groups_finished.push_back(g->id);
        }
    }
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g->done; }), groups.end());
    bool identity = static_cast<int64_t>(keep.size()) == offset;
    for (size_t i = 0; identity && i < keep.size(); ++i) identity = keep[i] == static_cast<int64_t>(i);
    if (!identity) select(keep);
    return report;
}

void BatchDecoder::Impl::select(const std::vector<int64_t>& keep) {
    if (groups.empty()) return reset();
    T5Network::select_rows(st, long_tensor(keep, st.self_k[0].device()));
}

BatchDecoder::BatchDecoder(const Model& model) : impl_(std::make_unique<Impl>(model)) {}
BatchDecoder::~BatchDecoder() = default;

int BatchDecoder::rows_for(const GenerationOptions& o) {
    if (o.num_beams > 1) return o.num_beams;
    return o.do_sample ? o.num_return_sequences : 1;
}

void BatchDecoder::add(const GroupSpec& spec) {
    c10::InferenceMode guard;
    with_out_of_memory_as_error([&] {
        impl_->add(spec);
        return 0;
    });
}

void BatchDecoder::remove(GroupId group) {
    c10::InferenceMode guard;
    auto& groups = impl_->groups;
    std::vector<int64_t> keep;
    int64_t offset = 0;
    bool found = false;
    for (auto& g : groups) {
        if (g->id == group) {
            found = true;
            g->done = true;
        } else {
            for (int64_t i = 0; i < g->rows; ++i) keep.push_back(offset + i);
        }
        offset += g->rows;
    }
    impl_->results.erase(group);
    if (!found) return;
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g->done; }), groups.end());
    impl_->select(keep);
    if (!groups.empty()) impl_->rebuild_key_bias();
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

int BatchDecoder::rows() const { return static_cast<int>(impl_->total_rows()); }
int BatchDecoder::groups() const { return static_cast<int>(impl_->groups.size()); }

}  // namespace t5s::serve
